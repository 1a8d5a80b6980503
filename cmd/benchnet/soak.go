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
	"github.com/benchnet/benchnet/internal/scenario"
)

func newSoakCmd() *cobra.Command {
	var (
		s        = experiment.DefaultSoak()
		up       upFlags
		rerender string
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
over time; report.md is the full run report.`,
		Example: `  benchnet soak --rate 300 --duration 10m
  benchnet soak examples/quickstart.toml --rate 200 --connections 2 --duration 20m
  benchnet soak --report runs/20261123-180000-quickstart`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rerender != "" {
				return renderSoak(cmd, rerender, s.Bootstrap)
			}
			m, err := loadManifest(args)
			if err != nil {
				return err
			}
			if errs := s.Validate(); len(errs) > 0 {
				msgs := make([]string, len(errs))
				for i, e := range errs {
					msgs[i] = "--" + e.Error()
				}
				return usageError{fmt.Errorf("invalid flag %s", strings.Join(msgs, "; "))}
			}
			m.Load = s.Load(m.Load)
			if errs := m.Validate(); len(errs) > 0 {
				return usageError{errs}
			}
			if err := needRoot(); err != nil {
				return err
			}
			if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
				return err
			}
			out, runErr := scenario.Steady(cmd.Context(), m, scenario.Options{
				Up: up.options(), ScrapeInterval: scrape, Log: os.Stderr, Progress: os.Stderr,
			})
			printOutcome(cmd, out.RunDir, out.Report)
			if out.Results == nil {
				return runErr
			}
			return errors.Join(runErr, renderSoak(cmd, out.RunDir, s.Bootstrap))
		},
	}
	up.register(c)
	c.Flags().Float64Var(&s.Rate, "rate", s.Rate, "tx/s per connection")
	c.Flags().IntVarP(&s.Connections, "connections", "c", s.Connections, "connections (spread over validators as the manifest's load.target says)")
	c.Flags().DurationVar(&s.Duration.Duration, "duration", s.Duration.Duration, "how long to load")
	c.Flags().IntVar(&s.Bootstrap, "bootstrap", s.Bootstrap, "bootstrap resamples of the fit's confidence intervals")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	c.Flags().StringVar(&rerender, "report", "", "only refit and re-render soak.md and soak.html of a soak's run directory")
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
