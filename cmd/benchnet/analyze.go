package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// recoveredReason is what harvest.json says when analyze harvested offline.
const recoveredReason = "no harvest.json: killed or crashed before its own harvest"

func newAnalyzeCmd() *cobra.Command {
	var reharvest bool
	cmd := &cobra.Command{
		Use:   "analyze RUN_DIR",
		Short: "Account every tx and write results.json from a run directory, harvesting a dead run's blocks from its stores",
		Long: `analyze writes txs.csv and results.json (the accounting, latency and TPS)
from what a run directory holds. A finished run already has its blocks
(blocks.csv, block_txs.csv, harvest.json): analyze recomputes from them.

A run that did not finish (the harness killed with -9, a crash) has sent.csv
and the nodes' stores in homes/ but no harvest. analyze then reads the blocks
offline, as CometBFT's loadtime report reads a blockstore: each validator's
store is opened with its own release's 'cometbft inspect' on a free loopback
port, the highest one is harvested, and harvest.json and results.json say the
results were recovered from a run that did not finish. The nodes must be
stopped first ('benchnet down RUN_DIR'): a running node holds its store.

It then judges the [thresholds] of the directory's manifest.toml on the new
results, as the run did (exit 3 when one fails or was not measured).

Then 'benchnet report RUN_DIR' renders the report.`,
		Example: `  benchnet down runs/20261123-101500-quickstart && benchnet analyze runs/20261123-101500-quickstart
  benchnet analyze --reharvest runs/20261123-101500-quickstart`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			d, err := rundir.Open(dir)
			if err != nil {
				return usageError{err}
			}
			kind, err := plan.RunKind(d.Path)
			if err != nil {
				return err
			}
			ak, err := analyze.For(kind)
			if err != nil {
				return err
			}
			if ak.Recover == nil {
				// A kind whose analysis reads only the harness's files
				// (a gossip run: its hosts' traces against published.csv)
				// needs no harvest first.
				return analyzeDir(cmd, d)
			}
			for _, f := range []string{rundir.Plan, rundir.SentCSV.Name} {
				if _, err := os.Stat(d.Join(f)); err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return usageError{fmt.Errorf("%s has no %s: not a run directory, or its load never started", dir, f)}
					}
					return err
				}
			}
			_, err = os.Stat(d.Join(rundir.HarvestFile))
			harvested := err == nil
			if !harvested || reharvest {
				if live, err := isLive(d.Join(rundir.State)); err != nil {
					return err
				} else if live {
					return usageError{fmt.Errorf("%s is still up: its nodes hold their stores; run 'benchnet down %s' first", dir, dir)}
				}
				reason := recoveredReason
				if harvested {
					reason = "re-harvested offline on request (--reharvest)"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "harvesting %s offline from the nodes' stores (%s)\n", dir, reason)
				if err := ak.Recover(cmd.Context(), d.Path, reason, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			return analyzeDir(cmd, d)
		},
	}
	cmd.Flags().BoolVar(&reharvest, "reharvest", false, "read the blocks from the nodes' stores again even when the run harvested them")
	return cmd
}

// analyzeDir runs d's kind's analysis, prints its summary and what it
// wrote, and re-judges the manifest's thresholds.
func analyzeDir(cmd *cobra.Command, d *rundir.Dir) error {
	res, kind, err := analyze.Run(d)
	if err != nil {
		return err
	}
	fmt.Fprint(cmd.OutOrStdout(), kind.Summary(res))
	var wrote []string
	for _, f := range append(slices.Clone(kind.Outputs), rundir.ResultsFile) {
		wrote = append(wrote, d.Join(f))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s; the report: benchnet report %s\n", strings.Join(wrote, " and "), d.Path)
	return judgeCopy(d, cmd.ErrOrStderr())
}

// isLive reports whether state is a registered live run's state file.
func isLive(state string) (bool, error) {
	abs, err := filepath.Abs(state)
	if err != nil {
		return false, err
	}
	active, err := proctable.ActiveRuns()
	if err != nil {
		return false, err
	}
	for _, a := range active {
		if aa, err := filepath.Abs(a); err == nil && aa == abs {
			return true, nil
		}
	}
	return false, nil
}

// judgeCopy judges the [thresholds] of the run directory's manifest copy on
// the results analyze just wrote (which replaced the run's judged ones): a
// failed one is exit 3, as it was for the run. Editing the copy's
// [thresholds] and analyzing again re-judges a finished run.
func judgeCopy(d *rundir.Dir, log io.Writer) error {
	p := d.Join(rundir.Manifest)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	m, err := manifest.LoadCopy(p, "")
	if err != nil {
		return fmt.Errorf("thresholds of %s: %v", p, err)
	}
	if j := experiment.ThresholdJudge(m, log); j != nil {
		return j(d.Path)
	}
	return nil
}
