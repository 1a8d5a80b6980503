package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
)

func newSoakCmd() *cobra.Command {
	var (
		s        = experiment.DefaultSoak()
		up       upFlags
		lf       loadFlags
		rerender string
		resume   string
		scrape   time.Duration
	)
	c := &cobra.Command{
		Use:   "soak [manifest.toml]",
		Short: "One long constant load, judged for throughput decay (half-life)",
		Long: `soak runs one long open-loop load ('benchnet run' with the rate, connections
and duration given here) and fits the committed throughput per second (from
block times) with tx/s(t) = a + b*exp(-t/tau): it reports the half-life
tau*ln2 with a 95 % bootstrap interval, or "no decay" when b is not
significantly above 0 or tau falls outside the window. soak.md and soak.html
in the run directory show tx/s per second with the fit, mempool and memory
over time; report.md is the full run report.

It takes every load flag of 'benchnet run' (a soak is a constant load over
--duration: --count, --shape and --ramp-from are refused); --rate,
--connections and --duration default to 200, 1 and 10m rather than the
manifest's. --resume DIR refits a finished soak's run directory.

A manifest with [variants] soaks each variant in turn (the base first), one
run directory each under DIR/<timestamp>-<name>-soak-variants/, each fitted
on its own; soak-variants.md sets the half-lives side by side and plots
every variant's tx/s with its fit. --resume on that directory refits the
finished runs and runs the others.`,
		Example: `  benchnet soak --rate 300 --duration 10m
  benchnet soak examples/quickstart.toml --rate 200 --connections 2 --duration 20m --size 512
  benchnet report runs/20261123-180000-quickstart`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rerender != "" {
				return renderSoak(cmd, rerender, s.Bootstrap)
			}
			env := experimentEnv(&up, scrape)
			var m *manifest.Manifest
			if resume != "" {
				if len(args) > 0 {
					return usageError{errors.New("--resume takes the manifest from DIR: give no manifest")}
				}
				env.Resume = resume
			} else {
				for _, name := range cellShapeFlags {
					if cmd.Flags().Changed(name) {
						return usageError{fmt.Errorf("--%s: a soak is a constant load over --duration", name)}
					}
				}
				var err error
				if m, err = loadManifest(cmd.Context(), args); err != nil {
					return err
				}
				if err := up.applyRunner(m); err != nil {
					return err
				}
				if cmd.Flags().Changed("rate") {
					s.Rate = lf.l.Rate
				}
				if cmd.Flags().Changed("connections") {
					s.Connections = lf.l.Connections
				}
				if cmd.Flags().Changed("duration") {
					s.Duration = lf.l.Duration
				}
				if errs := s.Validate(); len(errs) > 0 {
					msgs := make([]string, len(errs))
					for i, e := range errs {
						msgs[i] = "--" + e.Error()
					}
					return usageError{fmt.Errorf("invalid flag %s", strings.Join(msgs, "; "))}
				}
				if err := lf.apply(cmd, m); err != nil {
					return err
				}
			}
			x, err := s.NewExecutor(m, env)
			if err != nil {
				return usage(err)
			}
			if resume == "" {
				if err := needRoot(); err != nil {
					return err
				}
				if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
					return err
				}
			}
			_, err = runExperiment(cmd, x)
			return err
		},
	}
	up.register(c)
	addHistoryFlags(c)
	lf.register(c.Flags())
	c.Flags().Lookup("rate").Usage = "tx/s per connection (default 200)"
	c.Flags().Lookup("connections").Usage = "connections (spread over validators as the manifest's load.target says; default 1)"
	c.Flags().Lookup("duration").Usage = "how long to load (default 10m)"
	for _, name := range cellShapeFlags {
		c.Flags().Lookup(name).Usage = "refused: a soak is a constant load over --duration"
	}
	c.Flags().IntVar(&s.Bootstrap, "bootstrap", s.Bootstrap, "bootstrap resamples of the fit's confidence intervals")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	c.Flags().StringVar(&resume, "resume", "", "refit the decay of a finished soak's run directory")
	c.Flags().StringVar(&rerender, "report", "", "refit and re-render soak.md and soak.html of a soak's run directory (alias of --resume DIR)")
	_ = c.Flags().MarkHidden("report")
	return c
}

// renderSoak fits the decay of dir's throughput (seeded from the manifest's
// seed, so a re-render gives the same bytes) and writes its report.
func renderSoak(cmd *cobra.Command, dir string, bootstrap int) error {
	var seed int64
	if m, err := manifest.LoadFile(filepath.Join(dir, "manifest.toml")); err == nil {
		seed = m.Seed
	}
	res, err := experiment.AnalyzeSoak(dir, seed, bootstrap)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "soak: %s\n", res.Fit.Verdict)
	files, err := report.RenderSoak(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", f)
	}
	return nil
}
