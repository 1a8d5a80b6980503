package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
)

// searchVariants runs `sweep --search` on a manifest with [variants]: one
// search directory per variant under one parent, their runs interleaved
// (experiment.SearchBuilds), then every variant's interval judged against
// the baseline's (judge.CompareSaturation at the search's precision).
func searchVariants(cmd *cobra.Command, m *manifest.Manifest, cfg *experiment.Sweep, env experiment.Env) error {
	names := m.VariantNames()
	var builds []experiment.Build
	for _, name := range names {
		vm, err := m.Variant(name)
		if err != nil {
			return err
		}
		builds = append(builds, experiment.Build{Name: name, Manifest: vm})
	}
	if err := needRoot(); err != nil {
		return err
	}
	if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "search of %d variants (%v), runs interleaved, a fresh testnet per run\n", len(names), names)
	res, runErr := experiment.SearchBuilds(cmd.Context(), env, *cfg, builds)
	var ue *experiment.UsageError
	if errors.As(runErr, &ue) {
		return usageError{runErr}
	}
	out := cmd.OutOrStdout()
	var rerr error
	for _, r := range res {
		files, err := report.RenderSweep(r.Dir)
		rerr = errors.Join(rerr, err)
		fmt.Fprintf(out, "%s: sweep directory %s\n", r.Name, r.Dir)
		for _, f := range files {
			fmt.Fprintf(out, "  %s\n", f)
		}
		finishDir(cmd, r.Dir)
	}
	for _, r := range res {
		outcome := r.State.Outcome
		if !r.State.Done {
			outcome = fmt.Sprintf("not finished (next probe %g tx/s)", r.State.Next)
		}
		fmt.Fprintf(out, "%s: %s, %s tx/s per connection in %d runs\n", r.Name, outcome, r.Interval, r.State.Runs)
	}
	if len(res) > 1 {
		for _, r := range res[1:] {
			v := judge.CompareSaturation(res[0].Interval, r.Interval, cfg.Precision)
			fmt.Fprintf(out, "%s vs %s: %s: %s\n", r.Name, res[0].Name, v.Outcome, v.Why)
		}
		fmt.Fprintf(out, "rule: %s\n", judge.SaturationRule(cfg.Precision))
	}
	if runErr != nil && len(res) > 0 {
		fmt.Fprintf(os.Stderr, "search not finished: each variant's directory under %s resumes alone with 'benchnet sweep --resume DIR' (no longer interleaved)\n", filepath.Dir(res[0].Dir))
	}
	return errors.Join(runErr, rerr)
}
