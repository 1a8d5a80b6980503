package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

func newCalibrateCmd() *cobra.Command {
	var export string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "calibrate QA_DIR...",
		Short: "Measure the lab's noise from finished QAs (A/A best): the pairs a 10 % decision needs here, each steady metric's run-to-run spread",
		Long: `calibrate reads finished QA directories of one machine and testbed and
records the lab's noise in the calibration record beside the release cache
(calibration.json), keyed by the machine's fingerprint (CPU model, cores,
kernel), the testbed (the QA manifests and configuration) and the profile:

  - the saturation step's pairs: the spread of ln(candidate/baseline) over
    every counted pair, each QA's pairs around their own mean (valid for
    any QA, A/A or not);
  - the steady step's metrics (A/A QAs only): each one's run-to-run
    coefficient of variation.

It prints what the record implies: the pairs a decision at the saturation
threshold needs here, and the effect each steady metric can detect at 2 and
3 runs per side. A later QA of the same machine, testbed and profile states
these in its plan before it runs. --export writes the A/A runs themselves
(pairs, and steady runs by block) for the simulation of the verdict's
operating characteristic (internal/judge/testdata).`,
		Example: `  benchnet calibrate runs/*-qa-qa
  benchnet calibrate --export internal/judge/testdata/aa-runs.json runs/2026*-qa-qa`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, recs, q, err := calibrateDirs(args, !dryRun)
			if err != nil {
				return usageError{err}
			}
			version := c.Machine.Benchnet
			fmt.Fprint(cmd.OutOrStdout(), c.Describe(q.SaturationThreshold/100, q.MaxPairs))
			if export != "" {
				rec := judge.Recorded{Source: fmt.Sprintf("%s, %d cores, kernel %s; benchnet %s; QAs %v", c.Machine.CPUModel, c.Machine.CPUs, c.Machine.Kernel, version, c.QAs)}
				for _, r := range recs {
					if r.Index.Baseline.Ref != r.Index.Candidate.Ref {
						continue
					}
					rec.Pairs = append(rec.Pairs, r.Pairs...)
					rec.Steady = append(rec.Steady, r.Steady...)
				}
				data, err := json.MarshalIndent(rec, "", " ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(export, append(data, '\n'), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "exported %d pairs and %d steady rounds of A/A QAs to %s\n", len(rec.Pairs), len(rec.Steady), export)
			}
			if dryRun {
				return nil
			}
			path := experiment.CalibrationPath(release.CacheRoot())
			if err := experiment.SaveCalibration(path, c); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "recorded in %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&export, "export", "", "also write the A/A runs (pairs, steady runs by block) to FILE for the operating-characteristic simulation")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print, do not record (and pool QAs of other testbeds or methods, for --export)")
	return cmd
}

// calibrateDirs pools QA directories of one machine and testbed into a
// calibration record.
// strict refuses directories of another testbed or method (a record is
// of one; an export for the simulation may pool them).
func calibrateDirs(dirs []string, strict bool) (*experiment.Calibration, []*experiment.QADirRecord, *experiment.QA, error) {
	var recs []*experiment.QADirRecord
	for _, dir := range dirs {
		r, err := experiment.ReadQAForCalibration(dir)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("calibrate %s: %w", dir, err)
		}
		recs = append(recs, r)
	}
	c, err := experiment.Calibrate(recs, benchnetVersion(), time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	x := recs[0].Index
	q := experiment.DefaultQA()
	if err := json.Unmarshal(x.Config, q); err != nil {
		return nil, nil, nil, fmt.Errorf("calibrate %s: config: %w", recs[0].Dir, err)
	}
	c.TestbedHash = qaTestbedHash(recs[0].Dir, x)
	for _, r := range recs[1:] {
		if h := qaTestbedHash(r.Dir, r.Index); h != c.TestbedHash && strict {
			return nil, nil, nil, fmt.Errorf("%s has another testbed or method (%s) than %s (%s): calibrate each apart", r.Dir, h, recs[0].Dir, c.TestbedHash)
		}
	}
	return c, recs, q, nil
}

// recordAA adds a finished A/A QA to its machine's and testbed's
// calibration record (with the QAs already in it that still exist) and
// says what the record now implies.
func recordAA(root string, x *rundir.QAIndex, log io.Writer) {
	if x.Baseline.Ref != x.Candidate.Ref || x.Saturation == nil || len(x.Saturation.Pairs) == 0 {
		return
	}
	path := experiment.CalibrationPath(release.CacheRoot())
	cs, _ := experiment.ReadCalibrations(path)
	dirs := []string{root}
	abs, _ := filepath.Abs(root)
	if old := experiment.FindCalibration(cs, experiment.Fingerprint(x.Machine, ""), qaTestbedHash(root, x), x.Profile); old != nil {
		for _, d := range old.QAs {
			if _, err := os.Stat(filepath.Join(d, rundir.QAFile)); err == nil && d != abs {
				dirs = append(dirs, d)
			}
		}
	}
	c, _, q, err := calibrateDirs(dirs, true)
	if err == nil {
		err = experiment.SaveCalibration(path, c)
	}
	if err != nil {
		fmt.Fprintf(log, "qa: calibration not recorded: %v\n", err)
		return
	}
	fmt.Fprintf(log, "qa: an A/A QA: the lab's noise recorded in %s\n%s", path, c.Describe(q.SaturationThreshold/100, q.MaxPairs))
}

// applyCalibration gives the QA this machine's and testbed's calibration
// record to judge with (x.Calibration: its spreads are pooled with the
// QA's own) and says in the plan what it implies.
func applyCalibration(x *rundir.QAIndex, q *experiment.QA, manifests [][]byte) string {
	cs, err := experiment.ReadCalibrations(experiment.CalibrationPath(release.CacheRoot()))
	c := experiment.FindCalibration(cs, experiment.Fingerprint(x.Machine, ""), experiment.TestbedHash(manifests, x.Config), x.Profile)
	t := q.SaturationThreshold / 100
	x.Calibration = c.ForQA()
	if err != nil || x.Calibration == nil {
		return fmt.Sprintf("no calibration of this machine, testbed and profile yet: the paired step measures the noise as it goes (an A/A QA records it; benchnet calibrate DIR)")
	}
	n := c.PairsFor(t, 1000)
	s := fmt.Sprintf("calibration (%d pairs of %d QA(s), spread of ln(cand/base) %.4f): a %g %% saturation decision needs ~%d pairs here alone, fewer with the calibration's spread pooled (judged with it unless today's runs are noisier)", c.CapacityPairs, len(c.QAs), c.CapacitySD, 100*t, n)
	switch {
	case n == 0:
		s += fmt.Sprintf("; this testbed cannot decide %g %% within 1000 pairs", 100*t)
	case n > q.MaxPairs:
		s += fmt.Sprintf(", more than max_pairs (%d): the step will likely end inconclusive", q.MaxPairs)
	}
	for _, m := range c.Metrics {
		s += fmt.Sprintf("; steady %s detects %.1f %% at 3 rounds", m.Key, 100*m.MDE3)
	}
	return s
}

// qaTestbedHash is a QA directory's testbed identity: its manifests'
// bytes and its configuration.
func qaTestbedHash(dir string, x *rundir.QAIndex) string {
	var ms [][]byte
	if b, err := os.ReadFile(filepath.Join(dir, rundir.Manifest)); err == nil {
		ms = append(ms, b)
	}
	if x.RotateManifest != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "rotate.toml")); err == nil {
			ms = append(ms, b)
		}
	}
	return experiment.TestbedHash(ms, x.Config)
}

// benchnetVersion is the module version or VCS revision this binary was
// built from ("dev" when unknown).
func benchnetVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return s.Value[:12]
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}
