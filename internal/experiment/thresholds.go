package experiment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// ThresholdValues are one finished run's values of every metric a
// [thresholds] key may name (judge.ThresholdMetrics), read from its run
// directory alone: the kind's judged figures (the keys of compare
// --fail-on) and the outcomes (committed share, lost txs, rotate cycles
// caught up, halted). A metric the run did not measure is absent.
func ThresholdValues(dir, kind string) (map[string]float64, error) {
	nm, err := figures.For(kind)
	if err != nil {
		return nil, err
	}
	f, err := nm.ReadFigures(dir)
	if err != nil {
		return nil, err
	}
	vals := make(map[string]float64, len(f.Values)+4)
	for k, v := range f.Values {
		vals[k] = v
	}
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	res := f.Results
	if res == nil {
		if res, err = d.ReadResults(); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	if a := res.Accounting; a.Sent > 0 { // a tx run's accounting
		vals["committed"] = 100 * float64(a.Committed) / float64(a.Sent)
		vals["lost"] = float64(a.Lost)
	}
	// Faults: the halt is watched, and faults.json written, only when the
	// manifest has [[perturb]] or [rotate]; without it `halted` and
	// `caught_up` were not measured.
	fr, err := d.ReadFaults()
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, err)
	default:
		vals["halted"] = boolValue(fr.Halted != "")
		if len(fr.Cycles) > 0 {
			all := true
			for _, c := range fr.Cycles {
				all = all && c.CatchUpS >= 0
			}
			vals["caught_up"] = boolValue(all)
		}
	}
	return vals, nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ApplyThresholds judges m's [thresholds] on the finished run in dir and
// records them in its results.json (so the report, and `benchnet report`,
// show them). It returns the results (nil when m has none) and, when a
// condition failed or could not be evaluated, ThresholdError's verdict.
func ApplyThresholds(dir string, m *manifest.Manifest) ([]judge.ThresholdResult, error) {
	conds := m.ThresholdConditions()
	if len(conds) == 0 {
		return nil, nil
	}
	vals, err := ThresholdValues(dir, m.Kind())
	if err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	rs := judge.EvalThresholds(conds, vals)
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	res, err := d.ReadResults()
	if err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	res.Thresholds = rs
	if err := d.WriteResults(res); err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	return rs, ThresholdError(rs, m.Kind(), "")
}

// ThresholdError is the Fail verdict (exit 3) of failed or unevaluated
// thresholds, naming each; nil when all passed. where labels the run
// ("" for a single run).
func ThresholdError(rs []judge.ThresholdResult, kind, where string) error {
	failed := judge.ThresholdsFailed(rs, kind)
	if len(failed) == 0 {
		return nil
	}
	msg := "threshold failed: " + strings.Join(failed, "; ")
	if where != "" {
		msg = where + ": " + msg
	}
	return &VerdictError{Verdict: Fail, Msg: msg}
}

// ThresholdJudge is a scenario.Options.Judge for m: it judges m's
// [thresholds] on the finished run, prints one line per condition to log
// and returns the Fail verdict when one failed. Nil when m has none.
func ThresholdJudge(m *manifest.Manifest, log io.Writer) func(dir string) error {
	if len(m.Thresholds) == 0 {
		return nil
	}
	return func(dir string) error {
		rs, err := ApplyThresholds(dir, m)
		if log != nil && len(rs) > 0 {
			fmt.Fprint(log, FormatThresholds(rs, m.Kind()))
		}
		return err
	}
}

// FormatThresholds is the lines a run prints about its thresholds.
func FormatThresholds(rs []judge.ThresholdResult, kind string) string {
	var b strings.Builder
	passed := 0
	for _, r := range rs {
		if !r.Failed() {
			passed++
		}
	}
	fmt.Fprintf(&b, "thresholds: %d of %d passed\n", passed, len(rs))
	for _, r := range rs {
		actual := "not measured"
		if r.Actual != nil {
			actual = judge.FormatThresholdValue(kind, r.Metric, *r.Actual)
		}
		fmt.Fprintf(&b, "  %-4s  %s %s  (run: %s)\n", strings.ToUpper(r.Outcome[:min(4, len(r.Outcome))]), r.Metric, r.Condition, actual)
	}
	return b.String()
}

// recordThresholds is LiveLab.Steady's Judge: it records m's thresholds in
// the run's results.json (the report shows them) but returns only a
// failure to judge, not the verdict: the experiment running the run (a
// compare, a soak) gathers the verdicts of its runs with RunsThresholdError.
func recordThresholds(m *manifest.Manifest, log io.Writer) func(string) error {
	j := ThresholdJudge(m, log)
	if j == nil {
		return nil
	}
	return func(dir string) error {
		err := j(dir)
		if _, isVerdict := ExitCodeOf(err); isVerdict {
			return nil
		}
		return err
	}
}

// RunsThresholdError is the Fail verdict of the runs in dirs (absolute, or
// relative to root) whose results.json records a failed or unevaluated
// threshold, naming each run; nil when every recorded threshold passed.
// The rule is per run: every run must meet every threshold (not the
// median of a variant's runs).
func RunsThresholdError(root string, dirs []string) error {
	return runsThresholdError(root, dirs, false)
}

// runsThresholdError: with skipHarness, a run whose load generator could
// not keep its schedule (results.json generator_invalid: it measured the
// harness, not the network) is neither pass nor fail (a sweep's cell).
func runsThresholdError(root string, dirs []string, skipHarness bool) error {
	var msgs []string
	for _, dir := range dirs {
		p := dir
		if !filepath.IsAbs(p) && root != "" {
			p = filepath.Join(root, p)
		}
		res, err := (&rundir.Dir{Path: p}).ReadResults()
		if err != nil || len(res.Thresholds) == 0 || skipHarness && len(res.GeneratorInvalid) > 0 {
			continue
		}
		kind, err := plan.RunKind(p)
		if err != nil {
			msgs = append(msgs, filepath.Base(p)+": "+err.Error())
			continue
		}
		if failed := judge.ThresholdsFailed(res.Thresholds, kind); len(failed) > 0 {
			msgs = append(msgs, filepath.Base(p)+": "+strings.Join(failed, "; "))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &VerdictError{Verdict: Fail, Msg: fmt.Sprintf("threshold failed in %d run(s): %s", len(msgs), strings.Join(msgs, " | "))}
}
