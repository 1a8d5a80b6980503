package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/report"
)

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR | COMPARE_DIR",
		Short: "Re-render report.md and report.html from a run directory's stored data",
		Long: `report reads only what a run stored (manifest, plan, results.json, txs.csv,
blocks.csv, mempool.csv, events.jsonl, metrics/) and writes report.md with
plots/*.png beside it and a self-contained report.html. No node needs to be
running; the same run directory always gives the same bytes, so a report
re-rendered from a finished run is identical to the one the run wrote.

A run that did not finish has no results.json: 'benchnet analyze RUN_DIR'
recovers it from the nodes' stores first.`,
		Example: `  benchnet report runs/20261123-101500-quickstart
  benchnet report --out /tmp/r runs/20261123-101500-quickstart`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			render := func() ([]string, error) { return report.Render(args[0], out) }
			if _, err := os.Stat(filepath.Join(args[0], experiment.CompareFile)); err == nil {
				render = func() ([]string, error) { return report.RenderCompare(args[0]) } // compare.go
			}
			written, err := render()
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
	cmd.Flags().StringVar(&out, "out", "", "write the report here instead of into RUN_DIR")
	return cmd
}
