package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/scenario"
	"github.com/benchnet/benchnet/internal/testnet"
)

func newRunCmd() *cobra.Command {
	var (
		up       upFlags
		lf       loadFlags
		preserve bool
		prom     bool
		scrape   time.Duration
	)
	c := &cobra.Command{
		Use:   "run [manifest.toml]",
		Short: "Up, warm-up, load, drain, harvest, report, down: one measured run",
		Long: `run brings the testnet up, starts the Prometheus scraper and process stats,
warms up, sends the open-loop load of the manifest's [load] table (flags
override it field by field), waits for the mempools to drain, harvests every
block of the run, accounts every tx (committed, rejected, lost or pending), prints the
summary, renders report.md and report.html and tears the testnet down. With no
manifest it runs the built-in quickstart. Everything lands in the run directory
as it happens; Ctrl-C keeps what was collected and still tears down.`,
		Example: `  benchnet run
  benchnet run examples/quickstart.toml --rate 200 --duration 20s --output scratch-runs
  benchnet run examples/v038.toml --method sync --transport http
  benchnet run --prometheus      # plus a Prometheus server for Grafana, data in <run>/prometheus/data`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(cmd.Context(), args)
			if err != nil {
				return err
			}
			if err := lf.apply(cmd, m); err != nil {
				return err
			}
			if err := up.applyRunner(m); err != nil {
				return err
			}
			if err := up.fit(cmd, m, os.Stderr); err != nil {
				return err
			}
			if err := needRoot(); err != nil {
				return err
			}
			if preserve {
				if err := preservable(cmd.Context(), m); err != nil {
					return err
				}
			}
			if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
				return err
			}
			out, err := scenario.Steady(cmd.Context(), m, scenario.Options{
				Up:             up.options(),
				ScrapeInterval: scrape,
				Preserve:       preserve,
				Prometheus:     prom,
				Log:            os.Stderr,
				Progress:       os.Stderr,
				Judge:          experiment.ThresholdJudge(m, os.Stderr),
			})
			printOutcome(cmd, out.RunDir, out.Report)
			finishDir(cmd, out.RunDir)
			return err
		},
	}
	up.register(c)
	addHistoryFlags(c)
	lf.register(c.Flags())
	c.Flags().BoolVar(&preserve, "preserve", false, "leave the testnet up at the end (remove it with 'benchnet down'); refused with the userspace link emulator, whose links die with this process")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	c.Flags().BoolVar(&prom, "prometheus", false, "also run a real Prometheus server (Debian package, installed on demand) scraping every node; its TSDB stays in the run directory")
	return c
}

// preservable refuses --preserve, before anything is built or created, when
// the testnet's links would run through the userspace emulator: it lives in
// this process, so the TAPs die when `run` exits and a preserved testnet
// would have dead links.
func preservable(ctx context.Context, m *manifest.Manifest) error {
	kind, reason, err := testnet.LinkBackend(ctx, m)
	if err != nil {
		return err
	}
	if kind != linkem.KindUserspace {
		return nil
	}
	return usageError{fmt.Errorf("--preserve: this testnet's links use the userspace link emulator (%s), which runs inside this process: "+
		"its links would die when 'run' exits. Use 'benchnet up' (it stays in the foreground) and then 'benchnet load', "+
		"or [network].linkem = \"netem\" on a kernel with sch_netem", reason)}
}

func printOutcome(cmd *cobra.Command, dir string, files []string) {
	if dir == "" {
		return
	}
	fmt.Fprintf(cmd.OutOrStdout(), "run directory: %s\n", dir)
	for _, f := range files {
		fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", f)
	}
}

func newLoadCmd() *cobra.Command {
	var (
		lf     loadFlags
		output string
		runDir string
		scrape time.Duration
	)
	c := &cobra.Command{
		Use:   "load [RUN_DIR]",
		Short: "Open-loop load against a testnet that is already up",
		Long: `load measures a testnet started with 'benchnet up': warm-up, open-loop load,
drain, harvest, accounting and report, into a new run directory of its own
(the testnet keeps running). Load parameters come from the testnet's manifest
[load] table, overridden by flags. RUN_DIR is the testnet's run directory
(default: the one testnet up).`,
		Example: `  benchnet up && benchnet load --rate 400 --connections 1 --duration 90s --size 1024
  benchnet load runs/20261123-101500-quickstart --method sync --count 1000`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if runDir != "" && runDir != args[0] {
					return usageError{errors.New("give the run directory once: as RUN_DIR (--run is its old spelling)")}
				}
				runDir = args[0]
			}
			up, err := pickRun(runDir)
			if err != nil {
				return err
			}
			src, err := rundir.Open(up)
			if err != nil {
				return err
			}
			m, err := manifest.LoadCopy(src.ManifestPaths())
			if err != nil {
				return fmt.Errorf("manifest of %s: %w", up, err)
			}
			if d, err := node.New(m.Kind(), node.Config{}); err != nil {
				return err
			} else if _, ok := d.(node.TxChain); !ok {
				return usageError{fmt.Errorf("%s is a %s testnet: 'load' sends txs to a chain; run its workload with 'benchnet run'", up, m.Kind())}
			}
			if err := lf.apply(cmd, m); err != nil {
				return err
			}
			p, err := plan.Read(src.Path)
			if err != nil {
				return err
			}
			p.Load = m.Load
			if err := testnet.ReachFromState(p, src.Join(rundir.State)); err != nil {
				return fmt.Errorf("endpoints of %s: %w", up, err)
			}
			dir, err := rundir.Create(output, p.Name+"-load", time.Now())
			if err != nil {
				return err
			}
			defer dir.Close()
			pj, err := p.JSON()
			if err != nil {
				return err
			}
			if err := errors.Join(dir.WriteFile(rundir.Manifest, m.Raw), dir.WriteFile(rundir.Plan, pj),
				dir.WriteFile("testnet.txt", []byte(up+"\n"))); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "load run %s against the testnet of %s\n", dir.Path, up)

			ctx := cmd.Context()
			// `up` never starts a [rotate] group (only `run` rotates it):
			// nothing dials those nodes.
			absent := testnet.NotStartedByUp(m, p)
			if len(absent) > 0 {
				names := slices.Sorted(maps.Keys(absent))
				fmt.Fprintf(os.Stderr, "not started by 'up' ([rotate] group %q, rotated only by 'benchnet run'): %s: left out of the warm-up, the load, the collectors and the drain\n",
					m.Rotate.Group, strings.Join(names, ", "))
			}
			notStarted := func(node string) bool { return absent[node] }
			pids := proctable.NodePIDs(src.Join(rundir.State))
			stopCollector := scenario.StartCollector(ctx, dir, p, func(node string) int { return pids[node] },
				func(node string) bool { return !absent[node] }, nil, scrape, os.Stderr)
			res, merr := scenario.MeasureRunning(ctx, dir, p, p.Load, testnet.NewRunID(), os.Stderr, os.Stderr, notStarted)
			stopCollector()
			if res != nil {
				fmt.Fprintln(os.Stderr)
				fmt.Fprint(os.Stderr, analyze.SummaryOf(p.NodeKind(), res))
			}
			files, rerr := report.Render(dir.Path, "")
			printOutcome(cmd, dir.Path, files)
			return errors.Join(merr, rerr)
		},
	}
	lf.register(c.Flags())
	c.Flags().StringVarP(&output, "output", "o", "runs", "root directory of run directories")
	c.Flags().StringVar(&runDir, "run", "", "alias of RUN_DIR")
	_ = c.Flags().MarkHidden("run")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	return c
}

// pickRun returns the run directory of the testnet to load: the one given,
// or the only live one.
func pickRun(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	states, err := proctable.ActiveRuns()
	if err != nil {
		return "", err
	}
	switch len(states) {
	case 0:
		return "", usageError{errors.New("no live testnet: start one with 'benchnet up', or name it with --run")}
	case 1:
		return filepath.Dir(states[0]), nil
	default:
		return "", usageError{fmt.Errorf("%d live testnets: pick one with --run", len(states))}
	}
}
