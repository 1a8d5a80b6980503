package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func init() {
	Register("compare", func() Config { return DefaultCompare() })
}

// Compare is the configuration of `benchnet compare`: every variant of a
// manifest run Repeats times, interleaved, then judged against the base.
// compare.json records it as the rundir.CompareConfig it is.
type Compare rundir.CompareConfig

// DefaultCompare is the compare configuration with its defaults.
func DefaultCompare() *Compare { return &Compare{Repeats: 3, Threshold: judge.DefaultThreshold} }

// Kind implements Config.
func (c *Compare) Kind() string { return "compare" }

// Validate implements Config: every problem, each naming its field.
func (c *Compare) Validate() []error {
	var errs []error
	if c.Repeats < 1 || c.Repeats > 100 {
		errs = append(errs, &manifest.FieldError{Field: "repeats", Msg: fmt.Sprintf("%d: want 1 to 100", c.Repeats)})
	}
	if !(c.Threshold > 0 && c.Threshold < 1000) {
		errs = append(errs, &manifest.FieldError{Field: "threshold", Msg: fmt.Sprintf("%v: want a percentage above 0", c.Threshold)})
	}
	if c.MaxRepeats != 0 && (c.MaxRepeats < c.Repeats || c.MaxRepeats > 100) {
		errs = append(errs, &manifest.FieldError{Field: "max_repeats", Msg: fmt.Sprintf("%d: want 0 (off) or %d (repeats) to 100", c.MaxRepeats, c.Repeats)})
	}
	if c.Equivalence && c.NonInferiority {
		errs = append(errs, &manifest.FieldError{Field: "equivalence", Msg: "asks \"the same within ±threshold?\"; non_inferiority asks \"worse by more than it?\": set one"})
	}
	known := AllMetricKeys()
	for _, k := range c.FailOn {
		if !slices.Contains(known, k) {
			errs = append(errs, &manifest.FieldError{Field: "fail_on", Msg: fmt.Sprintf("unknown metric %q (known: %s)", k, strings.Join(known, ", "))})
		}
	}
	return errs
}

// MinRuns is the runs per side a verdict on run values alone needs (peak
// mempool, RSS, CPU per tx): with two, an A/A pair regressed on this machine.
const MinRuns = 3

// CompareSeed seeds every bootstrap of a comparison.
const CompareSeed = 20261123

// CompareOrder is the run order: every variant once per round, every
// other round reversed (A B C, C B A, A B C …), so the drift of a shared
// machine spreads over all variants instead of landing on one, and so does
// a run's place in its round. With A B every round, an A/A QA's candidate
// always ran second, right after the previous run's node homes (~500 MB)
// were deleted, and read 6 % more CPU and a p50 latency 10–60 % higher in
// all three rounds (2026-11-28).
func CompareOrder(variants []string, repeats int) []rundir.CompareRun {
	var runs []rundir.CompareRun
	for r := 1; r <= repeats; r++ {
		runs = appendRound(runs, variants, r)
	}
	return runs
}

// appendRound adds round r (1-based) of variants, reversed when r is even.
func appendRound(runs []rundir.CompareRun, variants []string, r int) []rundir.CompareRun {
	for i := range variants {
		v := variants[i]
		if r%2 == 0 {
			v = variants[len(variants)-1-i]
		}
		runs = append(runs, rundir.CompareRun{Order: len(runs) + 1, Variant: v, Repeat: r, Status: rundir.RunPending})
	}
	return runs
}

// RuleText states the verdict rule of a CometBFT comparison as the report
// prints it (KindRuleText for another kind).
func RuleText(threshold float64) string {
	nm, _ := figures.For(manifest.KindCometBFT)
	return KindRuleText(threshold, nm)
}

// CompareOptions are what RunCompare needs besides the manifest.
type CompareOptions struct {
	// Output is the root under which DIR/<timestamp>-<name>-compare/ is made.
	Output string
	// Measure runs one variant's manifest once, its run directory under
	// runsRoot, and returns the directory (also when it failed after
	// creating it). scenario.Steady in the CLI; a fake in tests.
	Measure func(ctx context.Context, m *manifest.Manifest, runsRoot string) (runDir string, err error)
	// Cooldown is the longest settle between runs.
	Cooldown time.Duration
	Log      io.Writer
	Now      func() time.Time
	// Deadline bounds adaptive repeats: a round is added only when the
	// mean round so far still ends before it (zero: no bound).
	Deadline time.Time
	// Resume, when set, finishes that compare directory (m and cfg are then
	// read from it).
	Resume string
}

// steadyLab is a Lab of Steady runs only (compare's measure function).
type steadyLab func(ctx context.Context, m *manifest.Manifest, dir string) (string, error)

func (f steadyLab) Open(context.Context, *manifest.Manifest, string) (Testnet, error) {
	return nil, errors.New("this lab only runs whole runs")
}

func (f steadyLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	return f(ctx, m, dir)
}

// RunCompare runs every variant of m cfg.Repeats times, interleaved, then
// judges them; it returns the compare directory and its index (the compare
// executor with opts as its env).
func RunCompare(ctx context.Context, m *manifest.Manifest, cfg *Compare, opts CompareOptions) (string, *rundir.CompareIndex, error) {
	x, err := cfg.NewExecutor(m, Env{Lab: steadyLab(opts.Measure), Output: opts.Output, Cooldown: opts.Cooldown, Log: opts.Log, Now: opts.Now, Deadline: opts.Deadline, Resume: opts.Resume})
	if err != nil {
		var u *UsageError
		if errors.As(err, &u) {
			err = u.Err
		}
		return "", nil, err
	}
	res, err := x.Run(ctx)
	return res.Dir, x.(*compareExec).idx, err
}

// NewExecutor implements Runnable: every variant of m run cfg.Repeats
// times, interleaved, then judged. An error in one run is recorded and the
// comparison goes on; a cancelled ctx stops it with what it has judged.
// With env.Resume it finishes that compare directory: runs not done (pending
// or failed) are run again, with its settings and its manifest (m, when
// given, instead of the directory's copy).
func (c *Compare) NewExecutor(m *manifest.Manifest, env Env) (Executor, error) {
	if env.Lab == nil {
		return nil, errors.New("compare: no lab to measure with")
	}
	x := &compareExec{env: env}
	if env.Resume != "" {
		idx, err := ReadCompareIndex(env.Resume)
		if err != nil {
			return nil, &UsageError{err}
		}
		if idx.Source != "manifest" {
			return nil, &UsageError{fmt.Errorf("%s compares finished run directories: nothing to resume", env.Resume)}
		}
		// A caller that built the variants itself (qa: WithBuilds) passes
		// its manifest; the copy on disk is the manifest it started from.
		if m == nil {
			if m, err = loadCopy(env.Resume); err != nil {
				return nil, err
			}
		}
		cfg := Compare(idx.Config)
		c = &cfg
		x.idx = idx
		if x.root, err = filepath.Abs(env.Resume); err != nil {
			return nil, err
		}
	} else if errs := c.Validate(); len(errs) > 0 {
		return nil, &UsageError{errors.Join(errs...)}
	}
	nm, err := figures.For(m.Kind())
	if err != nil {
		return nil, err
	}
	if err := CheckFailOn(m.Kind(), c.FailOn); err != nil {
		return nil, &UsageError{err}
	}
	names := m.VariantNames()
	if len(names) < 2 {
		return nil, &UsageError{fmt.Errorf("%s declares no [variants.<name>] tables: compare needs two or more (or give finished run directories)", m.File)}
	}
	x.variants = map[string]*manifest.Manifest{}
	for _, n := range names {
		v, err := m.Variant(n)
		if err != nil {
			return nil, err
		}
		if len(m.Name)+1+len(n) <= 32 {
			v.Name = m.Name + "-" + n
		} else {
			v.Name = n
		}
		x.variants[n] = v
	}
	cfg := *c
	x.cfg, x.m, x.names, x.rule = &cfg, m, names, KindRuleText(c.Threshold, nm)
	if c.Equivalence {
		x.rule = EquivalenceRuleText(c.Threshold, nm)
	}
	return x, nil
}

type compareExec struct {
	env      Env
	cfg      *Compare
	m        *manifest.Manifest
	names    []string
	rule     string
	variants map[string]*manifest.Manifest
	root     string
	idx      *rundir.CompareIndex
}

func (x *compareExec) Run(ctx context.Context) (Result, error) {
	log := x.env.log()
	if x.idx == nil {
		root, err := x.env.claim(x.m.Name+"-compare", rundir.CompareRunsDir)
		if err != nil {
			return Result{Kind: "compare"}, fmt.Errorf("create compare directory: %w", err)
		}
		x.root = root
		x.idx = &rundir.CompareIndex{
			SchemaVersion: rundir.CompareSchema, Kind: "compare", Name: x.m.Name, Source: "manifest", Manifest: x.m.File, NodeKind: x.m.Kind(),
			Base: x.names[0], Variants: x.names, Labels: VariantLabels(x.m), Config: rundir.CompareConfig(*x.cfg), Seed: CompareSeed, Rule: x.rule,
			Started: x.env.now().UTC().Format(time.RFC3339), Runs: CompareOrder(x.names, x.cfg.Repeats),
		}
		if err := os.WriteFile(filepath.Join(root, rundir.Manifest), x.m.Raw, 0o644); err != nil {
			return x.result(), err
		}
		if err := WriteCompareIndex(root, x.idx); err != nil {
			return x.result(), err
		}
	}
	idx, root := x.idx, x.root
	var runErr error
	measured := 0
	ran, roundStart := 0, x.env.now() // rounds measured by this process
	var roundTime time.Duration
	for i := 0; ; i++ {
		if i == len(idx.Runs) {
			// Every planned run is done: add a round while a judged metric
			// is inconclusive (Pinpoint's adaptive repeats). The rounds
			// are all the index holds, a resumed compare's earlier ones
			// too (counting this process's alone, a resume numbered its
			// added round 1 again, and past max_repeats).
			rounds := len(idx.Runs) / len(idx.Variants)
			more, why := nextRound(root, idx, rounds, roundTime, x.env)
			idx.StopReason = why
			if !more {
				break
			}
			idx.AddedRounds++
			fmt.Fprintf(log, "compare: adding round %d: %s\n", rounds+1, why)
			idx.Runs = appendRound(idx.Runs, idx.Variants, rounds+1)
		}
		run := &idx.Runs[i]
		if run.Status == rundir.RunDone {
			continue
		}
		if ctx.Err() != nil {
			runErr = context.Cause(ctx)
			break
		}
		if measured > 0 && x.env.Cooldown > 0 {
			// Each run has its own testnet: no chain of the last one is left
			// to watch settle, so the settle is spent whole.
			select {
			case <-ctx.Done():
			case <-time.After(x.env.Cooldown):
			}
		}
		measured++
		if run.Status == rundir.RunFailed || run.RunDir != "" {
			fmt.Fprintf(log, "compare: run %d again (was %s%s)\n", run.Order, run.Status, map[bool]string{true: ": " + run.Error, false: ""}[run.Error != ""])
			run.Error = ""
		}
		fmt.Fprintf(log, "compare: run %d/%d: variant %s, repeat %d\n", run.Order, len(idx.Runs), run.Variant, run.Repeat)
		dir, err := x.env.Lab.Steady(ctx, x.variants[run.Variant], filepath.Join(root, rundir.CompareRunsDir))
		if dir != "" {
			run.RunDir = RelTo(root, dir)
		}
		switch {
		case err != nil:
			run.Status, run.Error = rundir.RunFailed, err.Error()
			fmt.Fprintf(log, "compare: run %d failed: %v\n", run.Order, err)
		default:
			run.Status = rundir.RunDone
		}
		if err := WriteCompareIndex(root, idx); err != nil {
			return x.result(), err
		}
		if (i+1)%len(idx.Variants) == 0 {
			ran++
			roundTime = x.env.now().Sub(roundStart) / time.Duration(ran)
		}
	}
	if runErr != nil {
		idx.StopReason = "interrupted: " + runErr.Error()
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = context.Cause(ctx)
	}
	idx.Complete = runErr == nil
	idx.Finished = x.env.now().UTC().Format(time.RFC3339)
	if err := JudgeCompare(root, idx); err != nil {
		return x.result(), errors.Join(runErr, err)
	}
	return x.result(), errors.Join(runErr, WriteCompareIndex(root, idx))
}

func (x *compareExec) result() Result {
	res := Result{Kind: "compare", Dir: x.root}
	if x.idx != nil {
		res = CompareResult(x.root, x.idx)
	}
	return res
}

// CompareResult is a comparison's verdict: Fail when a metric of fail_on
// regressed; else Pass once complete.
func CompareResult(root string, idx *rundir.CompareIndex) Result {
	res := Result{Kind: "compare", Dir: root, Complete: idx.Complete}
	unmeasured := Unmeasured(idx)
	switch {
	case idx.ExitCode == judge.ExitRegression && idx.Config.Equivalence:
		res.Verdict, res.Why = Fail, "not equivalent: "+strings.Join(idx.Regressions, ", ")
	case idx.ExitCode == judge.ExitRegression:
		res.Verdict, res.Why = Fail, "regression in "+strings.Join(idx.Regressions, ", ")
	case TestbedReason(idx) != "":
		res.Verdict, res.Why = Inconclusive, TestbedReason(idx)
	case len(unmeasured) > 0:
		res.Verdict, res.Why = Inconclusive, "not judged: no finished run of "+strings.Join(unmeasured, ", ")
	case idx.ExitCode == judge.ExitInconclusive:
		res.Verdict, res.Why = Inconclusive, fmt.Sprintf("not shown equivalent within ±%g %%: a judged metric is inconclusive", idx.Config.Threshold)
	case idx.Complete && idx.Config.Equivalence:
		res.Verdict, res.Why = Pass, fmt.Sprintf("equivalent within ±%g %%", idx.Config.Threshold)
	case idx.Complete:
		res.Verdict, res.Why = Pass, "no regression"
	}
	// [thresholds]: every run of every variant must meet them (per run,
	// not per median); a failed one fails the comparison like a regression.
	var dirs []string
	for _, r := range idx.Runs {
		if r.Status == rundir.RunDone && r.RunDir != "" {
			dirs = append(dirs, r.RunDir)
		}
	}
	var ve *VerdictError
	if terr := RunsThresholdError(root, dirs); errors.As(terr, &ve) {
		if res.Verdict == Fail {
			res.Why += "; " + ve.Msg
		} else {
			res.Verdict, res.Why = Fail, ve.Msg
		}
	}
	return res
}

// RelTo gives path relative to root when it lies inside it, else
// absolute.
func RelTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// MinRunsAfterTestbed is how many runs a side must keep when testbed-bound
// runs were left out of it: with one, the interval has no run-to-run noise
// (oneRunWarning), and the runs that were left out say that this testbed's
// noise was large; with none there is nothing to judge.
const MinRunsAfterTestbed = 2

// WriteCompareIndex writes compare.json atomically.
func WriteCompareIndex(root string, idx *rundir.CompareIndex) error {
	return rundir.CompareRecord.Write(root, idx)
}

// ReadCompareIndex reads compare.json, refusing a newer schema.
func ReadCompareIndex(root string) (*rundir.CompareIndex, error) {
	return rundir.CompareRecord.Read(root)
}

// RefusedError is a comparison refused for its inputs (a usage error).
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }
