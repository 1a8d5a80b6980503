package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A QA run in this process by the commands that decide with it (bisect,
// history run): each decision is an ordinary QA directory, with its plan,
// report and history record.

// runQAArgs runs `benchnet qa` in this process with an argument list,
// recording in parent's history database (its --history, --no-history)
// on the runner of its --runner.
func runQAArgs(parent *cobra.Command, args []string) error {
	for _, name := range []string{"history", "no-history", "runner"} {
		if f := parent.Flags().Lookup(name); f != nil && f.Changed {
			args = append(args, "--"+name+"="+f.Value.String())
		}
	}
	qc := newQACmd()
	qc.SetContext(parent.Context())
	qc.SetOut(parent.OutOrStdout())
	if err := qc.ParseFlags(args); err != nil {
		return usageError{err}
	}
	return qc.RunE(qc, qc.Flags().Args())
}

// isVerdictErr: a QA that ended in Fail or Inconclusive (its verdict, not
// a failed run).
func isVerdictErr(err error) bool {
	_, ok := experiment.ExitCodeOf(err)
	return ok
}

// nonVerdict drops a QA's verdict (Fail, Inconclusive: the decision, read
// from qa.json) and keeps a failure.
func nonVerdict(err error) error {
	if err != nil && isVerdictErr(err) {
		return nil
	}
	return err
}

// satQA is one saturation decision: candidate against baseline, the QA's
// saturation step alone.
type satQA struct {
	baseline, candidate string
	quick               bool
	budget              time.Duration
	// baselineFrom reuses that QA's search of the baseline (anyBaseline:
	// although its baseline is another build).
	baselineFrom string
	anyBaseline  bool
	manifest     []string
}

// runSaturationQA runs s with its QA directory under out and reads it
// back; a QA already there is read when finished, resumed when not. A
// verdict (Fail, Inconclusive) is in the index, not the error.
func runSaturationQA(cmd *cobra.Command, out string, s satQA) (string, *rundir.QAIndex, error) {
	if qd, err := onlyQADir(out); err == nil {
		if x, err := rundir.QARecord.Read(qd); err == nil {
			if x.Complete {
				return qd, x, nil
			}
			qerr := runQAArgs(cmd, []string{"--resume", qd})
			x, err := rundir.QARecord.Read(qd)
			return qd, x, errors.Join(nonVerdict(qerr), err)
		}
	}
	args := []string{"--baseline", s.baseline, "--candidate", s.candidate, "--steps", "saturation", "--output", out}
	if s.quick {
		args = append(args, "--quick")
	}
	if s.budget > 0 {
		args = append(args, "--budget", s.budget.String())
	}
	if s.baselineFrom != "" {
		args = append(args, "--baseline-from", s.baselineFrom)
		if s.anyBaseline {
			args = append(args, "--baseline-from-any")
		}
	}
	qerr := runQAArgs(cmd, append(args, s.manifest...))
	qd, err := onlyQADir(out)
	if err != nil {
		return "", nil, errors.Join(qerr, err)
	}
	x, err := rundir.QARecord.Read(qd)
	return qd, x, errors.Join(nonVerdict(qerr), err)
}

// noDecision: the QA has no paired verdict at all (not an inconclusive
// one).
func noDecision(x *rundir.QAIndex) bool {
	return x == nil || x.Saturation == nil || x.Saturation.Paired == nil || x.Saturation.Paired.Pairs == 0
}

// onlyQADir is the one QA directory under dir.
func onlyQADir(dir string) (string, error) {
	ms, _ := filepath.Glob(filepath.Join(dir, "*-qa"))
	if len(ms) != 1 {
		return "", fmt.Errorf("%s: %d QA directories, want one", dir, len(ms))
	}
	return ms[0], nil
}
