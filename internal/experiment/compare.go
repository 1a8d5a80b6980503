package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

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

// File names of a compare directory DIR/<timestamp>-<name>-compare/; its
// record is rundir's (rundir.CompareRecord).
const (
	CompareFile    = rundir.CompareFile
	CompareRunsDir = rundir.CompareRunsDir // the run directories of `compare MANIFEST`
	// CompareSchema is compare.json's schema_version.
	CompareSchema = rundir.CompareSchema
)

// Run states in compare.json.
const (
	RunPending = rundir.RunPending
	RunDone    = rundir.RunDone
	RunFailed  = rundir.RunFailed
)

// The records of compare.json (package rundir).
type (
	CompareIndex    = rundir.CompareIndex
	CompareRun      = rundir.CompareRun
	SweepRef        = rundir.SweepRef
	VariantSummary  = rundir.VariantSummary
	VariantVerdicts = rundir.VariantVerdicts
)

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
func CompareOrder(variants []string, repeats int) []CompareRun {
	var runs []CompareRun
	for r := 1; r <= repeats; r++ {
		runs = appendRound(runs, variants, r)
	}
	return runs
}

// appendRound adds round r (1-based) of variants, reversed when r is even.
func appendRound(runs []CompareRun, variants []string, r int) []CompareRun {
	for i := range variants {
		v := variants[i]
		if r%2 == 0 {
			v = variants[len(variants)-1-i]
		}
		runs = append(runs, CompareRun{Order: len(runs) + 1, Variant: v, Repeat: r, Status: RunPending})
	}
	return runs
}

// RuleText states the verdict rule of a CometBFT comparison as the report
// prints it (KindRuleText for another kind).
func RuleText(threshold float64) string {
	nm, _ := NodeMetricsFor(manifest.KindCometBFT)
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
func RunCompare(ctx context.Context, m *manifest.Manifest, cfg *Compare, opts CompareOptions) (string, *CompareIndex, error) {
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
	nm, err := NodeMetricsFor(m.Kind())
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
	idx      *CompareIndex
}

func (x *compareExec) Run(ctx context.Context) (Result, error) {
	log := x.env.log()
	if x.idx == nil {
		root, err := x.env.claim(x.m.Name+"-compare", CompareRunsDir)
		if err != nil {
			return Result{Kind: "compare"}, fmt.Errorf("create compare directory: %w", err)
		}
		x.root = root
		x.idx = &CompareIndex{
			SchemaVersion: CompareSchema, Kind: "compare", Name: x.m.Name, Source: "manifest", Manifest: x.m.File, NodeKind: x.m.Kind(),
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
		if run.Status == RunDone {
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
		if run.Status == RunFailed || run.RunDir != "" {
			fmt.Fprintf(log, "compare: run %d again (was %s%s)\n", run.Order, run.Status, map[bool]string{true: ": " + run.Error, false: ""}[run.Error != ""])
			run.Error = ""
		}
		fmt.Fprintf(log, "compare: run %d/%d: variant %s, repeat %d\n", run.Order, len(idx.Runs), run.Variant, run.Repeat)
		dir, err := x.env.Lab.Steady(ctx, x.variants[run.Variant], filepath.Join(root, CompareRunsDir))
		if dir != "" {
			run.RunDir = RelTo(root, dir)
		}
		switch {
		case err != nil:
			run.Status, run.Error = RunFailed, err.Error()
			fmt.Fprintf(log, "compare: run %d failed: %v\n", run.Order, err)
		default:
			run.Status = RunDone
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
func CompareResult(root string, idx *CompareIndex) Result {
	res := Result{Kind: "compare", Dir: root, Complete: idx.Complete}
	switch {
	case idx.ExitCode == judge.ExitRegression && idx.Config.Equivalence:
		res.Verdict, res.Why = Fail, "not equivalent: "+strings.Join(idx.Regressions, ", ")
	case idx.ExitCode == judge.ExitRegression:
		res.Verdict, res.Why = Fail, "regression in "+strings.Join(idx.Regressions, ", ")
	case TestbedReason(idx) != "":
		res.Verdict, res.Why = Inconclusive, TestbedReason(idx)
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
		if r.Status == RunDone && r.RunDir != "" {
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

// RunPath resolves a run's directory against the compare directory.
func RunPath(root string, r CompareRun) string { return r.RunPath(root) }

// JudgeCompare reads every done run's figures and fills in Summary,
// Verdicts, Regressions and ExitCode. Deterministic: the same run
// directories give the same index.
func JudgeCompare(root string, idx *CompareIndex) error {
	nm, err := NodeMetricsFor(idx.NodeKind)
	if err != nil {
		return err
	}
	figs := map[string][]*RunFigures{}
	byRepeat := map[string]map[int]*RunFigures{} // per variant, its runs by round
	excluded := map[string][]string{}            // per variant, its testbed-bound runs' reasons
	idx.TestbedBound = nil
	for _, r := range idx.Runs {
		if r.Status != RunDone {
			continue
		}
		f, err := nm.ReadFigures(RunPath(root, r))
		if err != nil {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s): %v: left out", r.Order, r.Variant, err))
			continue
		}
		if tb := f.Results.TestbedBound; len(tb) > 0 {
			// The testbed, not the build, made this run's figures: it is
			// named and left out of the judged values.
			why := strings.Join(tb, "; ")
			idx.TestbedBound = append(idx.TestbedBound, fmt.Sprintf("run %d (%s): %s", r.Order, r.Variant, why))
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s) is testbed-bound, left out of the verdict: %s", r.Order, r.Variant, why))
			excluded[r.Variant] = append(excluded[r.Variant], why)
			continue
		}
		if !f.Results.Valid {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s) is marked invalid: %s", r.Order, r.Variant, strings.Join(f.Results.Invalid, "; ")))
		}
		figs[r.Variant] = append(figs[r.Variant], f)
		if byRepeat[r.Variant] == nil {
			byRepeat[r.Variant] = map[int]*RunFigures{}
		}
		byRepeat[r.Variant][r.Repeat] = f
	}
	idx.Summary, idx.Verdicts, idx.Regressions = nil, nil, nil
	for _, v := range idx.Variants {
		s := VariantSummary{Variant: v, Runs: len(figs[v]), Values: map[string]float64{}}
		for _, m := range nm.Metrics() {
			if xs := values(figs[v], m.Key); len(xs) > 0 {
				s.Values[m.Key] = round6(mean(xs))
			}
		}
		idx.Summary = append(idx.Summary, s)
	}
	rule := judge.RegressionRule{Threshold: idx.Config.Threshold, Seed: idx.Seed, MinRuns: MinRuns, NonInferiority: idx.Config.NonInferiority}
	var all []judge.Judgement
	for _, v := range idx.Variants {
		if idx.IsBase(v) {
			continue
		}
		vv := VariantVerdicts{Variant: v, Base: idx.BaseFor(v)}
		for _, m := range nm.Metrics() {
			if len(values(figs[vv.Base], m.Key)) == 0 && len(values(figs[v], m.Key)) == 0 {
				continue // a metric of another workload (ooo_inclusion of a kv load)
			}
			j := judgeMetric(rule, m, nm.Unit(), figs[vv.Base], figs[v])
			if idx.Config.Paired {
				j = judgePaired(m, idx.Config, byRepeat[vv.Base], byRepeat[v])
			}
			vv.Judgements = append(vv.Judgements, j)
			if judge.ExitCode([]judge.Judgement{j}, idx.Config.FailOn, idx.Config.Equivalence) == judge.ExitRegression {
				idx.Regressions = append(idx.Regressions, v+": "+m.Key)
			}
		}
		if why := testbedShort(excluded, figs, vv.Base, v); why != "" {
			for i := range vv.Judgements {
				j := &vv.Judgements[i]
				j.Verdict, j.Reason, j.CILo, j.CIHi, j.RepeatsNeeded = judge.OutcomeInconclusive, why, nil, nil, 0
			}
			idx.Regressions = slices.DeleteFunc(idx.Regressions, func(s string) bool { return strings.HasPrefix(s, v+": ") })
		}
		all = append(all, vv.Judgements...)
		idx.Verdicts = append(idx.Verdicts, vv)
	}
	for _, j := range all {
		if j.Basis == nm.Unit()+"s" {
			idx.Warnings = appendOnce(idx.Warnings, oneRunWarning(nm.Unit()))
			break
		}
	}
	idx.ExitCode = judge.ExitCode(all, idx.Config.FailOn, idx.Config.Equivalence)
	return nil
}

// MinRunsAfterTestbed is how many runs a side must keep when testbed-bound
// runs were left out of it: with one, the interval has no run-to-run noise
// (oneRunWarning), and the runs that were left out say that this testbed's
// noise was large; with none there is nothing to judge.
const MinRunsAfterTestbed = 2

// testbedShort says why base against variant cannot be judged when the
// testbed-bound runs left out leave a side with fewer than
// MinRunsAfterTestbed runs ("" when both sides keep enough).
func testbedShort(excluded map[string][]string, figs map[string][]*RunFigures, base, variant string) string {
	var short []string
	for _, side := range []string{base, variant} {
		if x := excluded[side]; len(x) > 0 && len(figs[side]) < MinRunsAfterTestbed {
			short = append(short, fmt.Sprintf("%s kept %d run(s) after %d testbed-bound (%s)", side, len(figs[side]), len(x), x[0]))
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("testbed-bound: %s; at least %d per side needed", strings.Join(short, "; "), MinRunsAfterTestbed)
}

// TestbedReason is the first judgement's reason that a testbed-bound side
// made inconclusive ("" when none).
func TestbedReason(idx *CompareIndex) string {
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			if strings.HasPrefix(j.Reason, "testbed-bound: ") {
				return j.Reason
			}
		}
	}
	return ""
}

// oneRunWarning: with one run per side the interval sees no run-to-run
// noise (the A/A figures were measured on CometBFT blocks).
func oneRunWarning(unit string) string {
	if unit == "block" {
		return "one run per side: the intervals cover the noise between blocks of a run, " +
			"not between runs; such a pair of one configuration with itself regressed in 9 of 153 comparisons on the " +
			"development machine (none with 2 or more runs per side): repeat the runs before trusting a regression"
	}
	return fmt.Sprintf("one run per side: the intervals cover the noise between %[1]ss of a run, not between runs "+
		"(for blocks, such a pair of one configuration with itself regressed in 9 of 153 comparisons on the development machine): "+
		"repeat the runs before trusting a regression", unit)
}

// judgeMetric: where the metric has a per-unit form (blocks, messages), a
// two-stage bootstrap (runs, then units within them; units alone for one
// run per side); else over run values, which needs judge's MinRuns per side.
func judgeMetric(rule judge.RegressionRule, m judge.Metric, unit string, base, variant []*RunFigures) judge.Judgement {
	if bn, ok := nestedUnits(base, m.Key); ok {
		if vn, ok := nestedUnits(variant, m.Key); ok {
			r := rule
			r.Resamples = 2000 // each replicate recomputes every drawn run from its units
			basis := "runs+" + unit + "s"
			if bn.N == 1 || vn.N == 1 {
				basis = unit + "s"
			}
			return r.Compare(m, basis, bn, vn)
		}
	}
	return rule.Compare(m, "runs", judge.RunUnits(values(base, m.Key)), judge.RunUnits(values(variant, m.Key)))
}

// nestedUnits gives every run's units (blocks, messages) as its inner
// units; ok is false when a run has none or the metric has no per-unit form.
func nestedUnits(figs []*RunFigures, key string) (judge.Units, bool) {
	var runs []judge.Units
	for _, f := range figs {
		if f.Inner == nil {
			return judge.Units{}, false
		}
		u, ok := f.Inner(key)
		if !ok {
			return judge.Units{}, false
		}
		runs = append(runs, u)
	}
	return judge.NestedUnits(runs), len(runs) > 0
}

func values(figs []*RunFigures, key string) []float64 {
	var xs []float64
	for _, f := range figs {
		if v, ok := f.Values[key]; ok {
			xs = append(xs, v)
		}
	}
	return xs
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// WriteCompareIndex writes compare.json atomically.
func WriteCompareIndex(root string, idx *CompareIndex) error {
	return rundir.CompareRecord.Write(root, idx)
}

// ReadCompareIndex reads compare.json, refusing a newer schema.
func ReadCompareIndex(root string) (*CompareIndex, error) { return rundir.CompareRecord.Read(root) }

// DirVariant is one variant of `compare DIR_A DIR_B …`: a name and its
// finished run directories (repeats).
type DirVariant struct {
	Name string
	Dirs []string
}

// CompareDirs judges finished run directories: the first variant is the
// base. Their manifests must differ only in the keys a variant exists to
// change (releases, node config, app, transport, genesis) unless force; a machine that
// differs is a warning. The index is written into a new compare directory
// under output.
func CompareDirs(vars []DirVariant, cfg *Compare, output string, force bool, now time.Time) (string, *CompareIndex, error) {
	if len(vars) < 2 {
		return "", nil, errors.New("compare needs two or more run directories")
	}
	idx := &CompareIndex{SchemaVersion: CompareSchema, Kind: "compare", Source: "dirs", Config: rundir.CompareConfig(*cfg), Seed: CompareSeed, Complete: true}
	vars, err := expandSweeps(vars, idx)
	if err != nil {
		return "", nil, err
	}
	nm, err := dirsKind(vars, idx)
	if err != nil {
		return "", nil, err
	}
	if err := CheckFailOn(idx.NodeKind, cfg.FailOn); err != nil {
		return "", nil, err
	}
	idx.Rule = KindRuleText(cfg.Threshold, nm)
	seen := map[string]bool{}
	for i, v := range vars {
		if seen[v.Name] {
			v.Name = fmt.Sprintf("%s-%d", v.Name, i+1)
			vars[i].Name = v.Name
		}
		seen[v.Name] = true
		idx.Variants = append(idx.Variants, v.Name)
	}
	idx.Base = idx.Variants[0]
	if len(idx.Sweeps) > 0 {
		idx.Base = ""
		for _, v := range idx.Variants {
			if _, ok := idx.BaseOf[v]; !ok && idx.Base == "" {
				idx.Base = v
			}
		}
	}
	baseDir := vars[0].Dirs[0]
	baseDoc, err := manifestDoc(baseDir)
	if err != nil {
		return "", nil, err
	}
	idx.Name = nameOf(baseDoc, baseDir)
	baseMachine := readMachine(baseDir)
	var refused []string
	for _, v := range vars {
		for r, d := range v.Dirs {
			if _, err := os.Stat(filepath.Join(d, rundir.ResultsFile)); err != nil {
				return "", nil, fmt.Errorf("%s is not a finished run directory (no %s)", d, rundir.ResultsFile)
			}
			doc, err := manifestDoc(d)
			if err != nil {
				return "", nil, err
			}
			if doc == nil || baseDoc == nil {
				idx.Warnings = appendOnce(idx.Warnings, "some run directories have no manifest.toml: their manifests were not compared")
			} else if diff := manifestDiff(baseDoc, doc, nm.VariantKey); len(diff) > 0 {
				refused = append(refused, fmt.Sprintf("%s vs %s: %s", d, baseDir, strings.Join(diff, ", ")))
			}
			if m := readMachine(d); !reflect.DeepEqual(m, baseMachine) {
				idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("%s ran on another machine than %s (metrics/machine.json differs): the comparison mixes machines", d, baseDir))
			}
			idx.Runs = append(idx.Runs, CompareRun{Order: len(idx.Runs) + 1, Variant: v.Name, Repeat: r + 1, Status: RunDone, RunDir: absPath(d)})
		}
	}
	if len(refused) > 0 {
		msg := "the manifests differ beyond the keys a variant changes (" + nm.VariantKeys() + "):\n  " + strings.Join(refused, "\n  ")
		if !force {
			return "", nil, &RefusedError{msg + "\nuse --force to compare anyway"}
		}
		idx.Warnings = append(idx.Warnings, "--force: "+msg)
	}
	root, err := rundir.ClaimStamped(output, idx.Name+"-compare", now)
	if err != nil {
		return "", nil, fmt.Errorf("create compare directory: %w", err)
	}
	if err := JudgeCompare(root, idx); err != nil {
		return root, idx, err
	}
	return root, idx, WriteCompareIndex(root, idx)
}

// expandSweeps turns sweep directories (sweep.json) into one variant per
// load point (c x r) of each sweep, its done cells the repeats; with two or
// more sweeps, every sweep's point is judged against the first sweep's same
// point, and points the first sweep lacks are left out.
func expandSweeps(vars []DirVariant, idx *CompareIndex) ([]DirVariant, error) {
	type point struct {
		c int
		r float64
	}
	var sweeps []int
	for i, v := range vars {
		if len(v.Dirs) == 1 {
			if _, err := os.Stat(filepath.Join(v.Dirs[0], IndexFile)); err == nil {
				sweeps = append(sweeps, i)
			}
		}
	}
	if len(sweeps) == 0 {
		return vars, nil
	}
	if len(sweeps) != len(vars) {
		return nil, &RefusedError{"compare either sweeps or run directories, not both"}
	}
	idx.BaseOf = map[string]string{}
	var out []DirVariant
	var basePoints map[point]string
	for k, v := range vars {
		x, err := ReadIndex(v.Dirs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Dirs[0], err)
		}
		if x.Grouped() {
			// Its cells of one (c, r) are several variants' or durations':
			// pooling them would compare a mixture.
			return nil, &RefusedError{fmt.Sprintf("%s is a sweep over variants or durations: compare the run directories of its cells instead", v.Dirs[0])}
		}
		idx.Sweeps = append(idx.Sweeps, SweepRef{Label: v.Name, Dir: absPath(v.Dirs[0])})
		cells := map[point][]string{}
		var order []point
		for _, c := range x.Cells {
			if c.Status != Done || c.RunDir == "" {
				continue
			}
			p := point{c.Connections, c.Rate}
			if _, ok := cells[p]; !ok {
				order = append(order, p)
			}
			cells[p] = append(cells[p], filepath.Join(v.Dirs[0], c.RunDir))
		}
		sort.Slice(order, func(i, j int) bool {
			if order[i].c != order[j].c {
				return order[i].c < order[j].c
			}
			return order[i].r < order[j].r
		})
		points := map[point]string{}
		for _, p := range order {
			name := fmt.Sprintf("%s c%d r%g", v.Name, p.c, p.r)
			if k > 0 {
				base, ok := basePoints[p]
				if !ok {
					continue
				}
				idx.BaseOf[name] = base
			}
			points[p] = name
			out = append(out, DirVariant{Name: name, Dirs: cells[p]})
		}
		if k == 0 {
			basePoints = points
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the sweeps have no finished cell")
	}
	return out, nil
}

// RefusedError is a comparison refused for its inputs (a usage error).
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func readMachine(dir string) *rundir.Machine {
	d, err := rundir.Open(dir)
	if err != nil {
		return nil
	}
	m, err := d.ReadMachine()
	if err != nil {
		return nil
	}
	m.GoVersion = "" // the harness's build, not the machine
	return m
}

// manifestDoc is a run directory's manifest.toml as a generic document.
func manifestDoc(dir string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a sweep's cell keeps its manifest with its testnet
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	m, err := manifest.Parse(filepath.Join(dir, rundir.Manifest), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	doc := map[string]any{}
	raw, err := toml.Marshal(m)
	if err == nil {
		err = toml.Unmarshal(raw, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", dir, err)
	}
	return doc, nil
}

func nameOf(doc map[string]any, dir string) string {
	if n, ok := doc["name"].(string); ok && n != "" {
		return n
	}
	return filepath.Base(dir)
}

// dirsKind finds the node kind of every run directory: one kind for all, or
// a refusal naming the odd one.
func dirsKind(vars []DirVariant, idx *CompareIndex) (NodeMetrics, error) {
	first := ""
	for _, v := range vars {
		for _, d := range v.Dirs {
			k, err := rundir.RunKind(d)
			if err != nil {
				return nil, err
			}
			switch {
			case first == "":
				first = k
			case k != first:
				return nil, &RefusedError{fmt.Sprintf("%s is a %s run, %s a %s run: compare runs of one node kind", d, k, vars[0].Dirs[0], first)}
			}
		}
	}
	idx.NodeKind = first
	return NodeMetricsFor(first)
}

// manifestDiff lists the dotted paths where a and b differ, variant keys
// left out.
func manifestDiff(a, b map[string]any, variantKey func(string) bool) []string {
	var out []string
	var walk func(prefix string, x, y any)
	walk = func(prefix string, x, y any) {
		if prefix != "" && variantKey(prefix) {
			return
		}
		mx, okx := x.(map[string]any)
		my, oky := y.(map[string]any)
		if okx && oky {
			keys := map[string]bool{}
			for k := range mx {
				keys[k] = true
			}
			for k := range my {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, mx[k], my[k])
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s (%v vs %v)", prefix, short(x), short(y)))
		}
	}
	walk("", a, b)
	return out
}

func short(v any) string {
	if v == nil {
		return "unset"
	}
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// judgePaired judges a metric over the rounds in which both variants ran
// (a pair each: the two runs of one round, back to back), by the ratio
// variant/base with judge.PairedRule: the rounds' machine states cancel.
// An A/A QA's three steady rounds read a latency avg of 1097/1130,
// 1118/1134 and 1741/1851 ms: the third round ran on a slower machine,
// and the unpaired bootstrap's interval was -35 % to +60 %, where the
// rounds' own ratios agree within 3 % (2026-11-28).
func judgePaired(m judge.Metric, cfg rundir.CompareConfig, base, variant map[int]*RunFigures) judge.Judgement {
	r := judge.DefaultPairedRule()
	r.Threshold, r.Better, r.Prior = cfg.Threshold/100, m.Better, cfg.Priors[m.Key]
	r.MinPairs, r.MaxPairs = PairedMinRounds, max(cfg.MaxRepeats, cfg.Repeats, PairedMinRounds)
	r.Equivalence = cfg.Equivalence
	var rounds []int
	for k := range base {
		if _, ok := variant[k]; ok {
			rounds = append(rounds, k)
		}
	}
	slices.Sort(rounds)
	var ps []judge.Pair
	var bs, vs []float64
	for _, k := range rounds {
		b, bok := base[k].Values[m.Key]
		v, vok := variant[k].Values[m.Key]
		if !bok || !vok {
			continue
		}
		ps = append(ps, judge.Pair{Base: b, Cand: v})
		bs, vs = append(bs, b), append(vs, v)
	}
	pv := r.Decide(ps)
	j := judge.Judgement{Metric: m.Key, Basis: "pairs", NBase: pv.Pairs, NVariant: pv.Pairs, Verdict: pv.Outcome, Reason: pv.Why, RepeatsNeeded: pv.PairsNeeded}
	if len(bs) > 0 {
		j.Base, j.Variant = round6(mean(bs)), round6(mean(vs))
	}
	if pv.Ratio > 0 {
		j.DeltaPct = round6(100 * (pv.Ratio - 1))
	}
	if pv.Lo > 0 && pv.Hi > 0 {
		lo, hi := round6(100*(pv.Lo-1)), round6(100*(pv.Hi-1))
		j.CILo, j.CIHi = &lo, &hi
	}
	return j
}

// PairedMinRounds is the rounds a paired verdict needs: two pairs make a
// t interval (12.7 standard errors wide, so only a large change decides
// there; the QA plans 3 rounds).
const PairedMinRounds = 2
