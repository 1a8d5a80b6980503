package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/report"
)

func newReportCmd() *cobra.Command {
	var out, xr, yr string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render the report of a run, sweep, compare, soak or QA directory from its stored data",
		Long: `report reads only what a directory stored and writes its report again. The
kind of directory is known by the record in it: qa.json (qa.md, qa.html),
compare.json (compare.md,
compare.html), sweep.json (sweep.md, sweep.html), soak.json (a soak's run
directory: report.md, then soak.md and soak.html), else a run directory
(manifest, plan, results.json, txs.csv, blocks.csv, mempool.csv,
events.jsonl, metrics/ -> report.md with plots/*.png and a self-contained
report.html). No node needs to be running; the same directory always gives
the same bytes, so a report re-rendered from a finished run is identical to
the one the run wrote.

A run that did not finish has no results.json: 'benchnet analyze RUN_DIR'
recovers it from the nodes' stores first.

--xrange MIN:MAX zooms a run report's time plots (seconds since t = 0 of
the report: 10s:20s), --yrange MIN:MAX their Y axes: durations (0:2s) set
the latency plots' (ms), plain numbers (0:4000) every time plot's in its
own unit; either end may be left open (10s:). A zoomed report needs -o: the
run directory's own report keeps the whole run.`,
		Example: `  benchnet report runs/20261123-101500-quickstart
  benchnet report -o /tmp/r runs/20261123-101500-quickstart
  benchnet report -o /tmp/zoom --xrange 10s:20s --yrange 0:2s runs/20261123-101500-quickstart
  benchnet report runs/20261123-170000-quickstart-sweep
  benchnet report runs/20261123-120000-cmp-compare`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if k := report.DirKind(args[0]); out != "" && k != "run" && k != "soak" {
				return usageError{fmt.Errorf("%s is a %s directory: its report is written into it (--output is for a run's)", args[0], k)}
			}
			var written []string
			var err error
			if xr != "" || yr != "" {
				written, err = renderZoomed(args[0], out, xr, yr)
			} else {
				written, err = report.RenderDir(args[0], out)
			}
			if err != nil {
				if errors.Is(err, report.ErrNotRunDir) {
					return usageError{err}
				}
				return err
			}
			for _, p := range written {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write a run's report here instead of into DIR")
	cmd.Flags().StringVar(&out, "out", "", "alias of --output")
	cmd.Flags().StringVar(&xr, "xrange", "", "a run report's time axes, MIN:MAX in seconds since t = 0 (10s:20s); needs -o")
	cmd.Flags().StringVar(&yr, "yrange", "", "a run report's time plots' Y axes, MIN:MAX: durations for the latency plots (0:2s), numbers for all (0:4000); needs -o")
	_ = cmd.Flags().MarkHidden("out")
	return cmd
}

// renderZoomed renders a run's report zoomed into out (required: the run
// directory's own report stays the whole run).
func renderZoomed(dir, out, xr, yr string) ([]string, error) {
	if k := report.DirKind(dir); k != "run" && k != "soak" {
		return nil, usageError{fmt.Errorf("--xrange/--yrange zoom a run's report; %s is a %s directory", dir, k)}
	}
	if out == "" {
		return nil, usageError{fmt.Errorf("--xrange/--yrange need -o DIR: the run directory's own report keeps the whole run")}
	}
	var z report.Zoom
	var err error
	if xr != "" {
		if z.X, err = report.ParseRange("x", xr); err != nil {
			return nil, usageError{err}
		}
	}
	if yr != "" {
		if z.Y, err = report.ParseRange("y", yr); err != nil {
			return nil, usageError{err}
		}
	}
	return report.RenderZoomed(dir, out, z)
}
