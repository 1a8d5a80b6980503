package experiment

import (
	"context"
	"encoding/json"
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
type Compare struct {
	// Repeats is how many runs each variant gets (default 3).
	Repeats int `toml:"repeats" json:"repeats"`
	// Threshold is the regression rule in percent (default 10).
	Threshold float64 `toml:"threshold" json:"threshold_pct"`
	// FailOn lists the metrics whose regression fails the comparison
	// (exit 3); empty: every metric.
	FailOn []string `toml:"fail_on" json:"fail_on,omitempty"`
}

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
	known := AllMetricKeys()
	for _, k := range c.FailOn {
		if !slices.Contains(known, k) {
			errs = append(errs, &manifest.FieldError{Field: "fail_on", Msg: fmt.Sprintf("unknown metric %q (known: %s)", k, strings.Join(known, ", "))})
		}
	}
	return errs
}

// File names of a compare directory DIR/<timestamp>-<name>-compare/.
const (
	CompareFile    = "compare.json"
	CompareRunsDir = "runs" // the run directories of `compare MANIFEST`
	// CompareSchema is compare.json's schema_version.
	CompareSchema = 1
)

// Run states in compare.json.
const (
	RunPending = "pending"
	RunDone    = "done"
	RunFailed  = "failed"
)

// CompareIndex is compare.json: what was compared, every run, and the
// verdicts. It is written after every run, so an interrupted comparison
// keeps what it finished.
type CompareIndex struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "compare"
	Name          string `json:"name"`
	// Source is "manifest" (this command ran the variants) or "dirs"
	// (finished run directories given on the command line).
	Source   string `json:"source"`
	Manifest string `json:"manifest,omitempty"`
	// NodeKind is the runs' node kind: it picks the metrics judged and the
	// report's tables and plots ("" in older files: cometbft).
	NodeKind string   `json:"node_kind,omitempty"`
	Base     string   `json:"base"`
	Variants []string `json:"variants"` // the base first
	// BaseOf names another base for some variants: two sweeps compared
	// point by point, each point of a sweep against the base sweep's.
	BaseOf map[string]string `json:"base_of,omitempty"`
	// Sweeps are the sweep directories compared (label -> path), for the
	// committed-vs-offered overlay.
	Sweeps []SweepRef `json:"sweeps,omitempty"`
	Config Compare    `json:"config"`
	// Seed of the bootstrap (fixed, so a re-judgement gives the same CIs).
	Seed     uint64       `json:"seed"`
	Rule     string       `json:"rule"`
	Started  string       `json:"started,omitempty"`
	Finished string       `json:"finished,omitempty"`
	Complete bool         `json:"complete"`
	Runs     []CompareRun `json:"runs"`
	// Summary: per variant, the mean of each metric over its done runs.
	Summary []VariantSummary `json:"summary"`
	// Verdicts: per variant other than the base, one judgement per metric.
	Verdicts []VariantVerdicts `json:"verdicts"`
	// Regressions lists "variant: metric" for every regression in FailOn.
	Regressions []string `json:"regressions,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	ExitCode    int      `json:"exit_code"`
}

// SweepRef is one sweep of `compare SWEEP_A SWEEP_B`.
type SweepRef struct {
	Label string `json:"label"`
	Dir   string `json:"dir"`
}

// baseFor is the variant v is judged against.
func (idx *CompareIndex) baseFor(v string) string {
	if b, ok := idx.BaseOf[v]; ok {
		return b
	}
	return idx.Base
}

// IsBase reports whether v is judged against nothing.
func (idx *CompareIndex) IsBase(v string) bool {
	if v == idx.Base {
		return true
	}
	for _, b := range idx.BaseOf {
		if b == v {
			return true
		}
	}
	return false
}

// CompareRun is one run of one variant.
type CompareRun struct {
	Order   int    `json:"order"` // 1-based position in the run order
	Variant string `json:"variant"`
	Repeat  int    `json:"repeat"` // 1-based
	Status  string `json:"status"`
	// RunDir is relative to the compare directory when inside it, else absolute.
	RunDir string `json:"run_dir,omitempty"`
	Error  string `json:"error,omitempty"`
}

// VariantSummary is the Initia-style row of one variant.
type VariantSummary struct {
	Variant string             `json:"variant"`
	Runs    int                `json:"runs"`
	Values  map[string]float64 `json:"values"`
}

// VariantVerdicts is one variant judged against the base.
type VariantVerdicts struct {
	Variant    string            `json:"variant"`
	Base       string            `json:"base"`
	Judgements []judge.Judgement `json:"judgements"`
}

// MinRuns is the runs per side a verdict on run values alone needs (peak
// mempool, RSS, CPU per tx): with two, an A/A pair regressed on this machine.
const MinRuns = 3

// CompareSeed seeds every bootstrap of a comparison.
const CompareSeed = 20261123

// CompareOrder is the run order: every variant once per round, rounds
// repeated (A B C A B C …), so the drift of a shared machine spreads over
// all variants instead of landing on one.
func CompareOrder(variants []string, repeats int) []CompareRun {
	var runs []CompareRun
	for r := 1; r <= repeats; r++ {
		for _, v := range variants {
			runs = append(runs, CompareRun{Order: len(runs) + 1, Variant: v, Repeat: r, Status: RunPending})
		}
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
	// Cooldown waits between runs (the machine settles).
	Cooldown time.Duration
	Log      io.Writer
	Now      func() time.Time
}

// RunCompare runs every variant of m cfg.Repeats times, interleaved, then
// judges them; it returns the compare directory and its index. An error in
// one run is recorded and the comparison goes on; a cancelled ctx stops it
// with what it has judged.
func RunCompare(ctx context.Context, m *manifest.Manifest, cfg *Compare, opts CompareOptions) (string, *CompareIndex, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	nm, err := NodeMetricsFor(m.Kind())
	if err != nil {
		return "", nil, err
	}
	if err := CheckFailOn(m.Kind(), cfg.FailOn); err != nil {
		return "", nil, err
	}
	names := m.VariantNames()
	if len(names) < 2 {
		return "", nil, fmt.Errorf("%s declares no [variants.<name>] tables: compare needs two or more (or give finished run directories)", m.File)
	}
	variants := map[string]*manifest.Manifest{}
	for _, n := range names {
		v, err := m.Variant(n)
		if err != nil {
			return "", nil, err
		}
		if len(m.Name)+1+len(n) <= 32 {
			v.Name = m.Name + "-" + n
		} else {
			v.Name = n
		}
		variants[n] = v
	}
	root, err := claimDir(opts.Output, opts.Now().UTC().Format("20060102-150405")+"-"+m.Name+"-compare")
	if err != nil {
		return "", nil, err
	}
	if err := os.Mkdir(filepath.Join(root, CompareRunsDir), 0o755); err != nil {
		return "", nil, fmt.Errorf("create compare directory: %w", err)
	}
	idx := &CompareIndex{
		SchemaVersion: CompareSchema, Kind: "compare", Name: m.Name, Source: "manifest", Manifest: m.File, NodeKind: m.Kind(),
		Base: names[0], Variants: names, Config: *cfg, Seed: CompareSeed, Rule: KindRuleText(cfg.Threshold, nm),
		Started: opts.Now().UTC().Format(time.RFC3339), Runs: CompareOrder(names, cfg.Repeats),
	}
	if err := os.WriteFile(filepath.Join(root, rundir.Manifest), m.Raw, 0o644); err != nil {
		return root, nil, err
	}
	if err := WriteCompareIndex(root, idx); err != nil {
		return root, nil, err
	}
	var runErr error
	for i := range idx.Runs {
		run := &idx.Runs[i]
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		if i > 0 && opts.Cooldown > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(opts.Cooldown):
			}
		}
		fmt.Fprintf(opts.Log, "compare: run %d/%d: variant %s, repeat %d\n", run.Order, len(idx.Runs), run.Variant, run.Repeat)
		dir, err := opts.Measure(ctx, variants[run.Variant], filepath.Join(root, CompareRunsDir))
		if dir != "" {
			run.RunDir = relTo(root, dir)
		}
		switch {
		case err != nil:
			run.Status, run.Error = RunFailed, err.Error()
			fmt.Fprintf(opts.Log, "compare: run %d failed: %v\n", run.Order, err)
		default:
			run.Status = RunDone
		}
		if err := WriteCompareIndex(root, idx); err != nil {
			return root, idx, err
		}
	}
	idx.Complete = runErr == nil
	idx.Finished = opts.Now().UTC().Format(time.RFC3339)
	if err := JudgeCompare(root, idx); err != nil {
		return root, idx, errors.Join(runErr, err)
	}
	return root, idx, errors.Join(runErr, WriteCompareIndex(root, idx))
}

// claimDir makes output/name, or name-2, -3 … when it exists: two
// comparisons started in one second never share a directory.
func claimDir(output, name string) (string, error) {
	if err := os.MkdirAll(output, 0o755); err != nil {
		return "", fmt.Errorf("create compare directory: %w", err)
	}
	base := filepath.Join(output, name)
	path := base
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return "", fmt.Errorf("create compare directory: %w", err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
}

// relTo gives path relative to root when it lies inside it.
func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// RunPath resolves a run's directory against the compare directory.
func RunPath(root string, r CompareRun) string {
	if filepath.IsAbs(r.RunDir) {
		return r.RunDir
	}
	return filepath.Join(root, r.RunDir)
}

// JudgeCompare reads every done run's figures and fills in Summary,
// Verdicts, Regressions and ExitCode. Deterministic: the same run
// directories give the same index.
func JudgeCompare(root string, idx *CompareIndex) error {
	nm, err := NodeMetricsFor(idx.NodeKind)
	if err != nil {
		return err
	}
	figs := map[string][]*RunFigures{}
	for _, r := range idx.Runs {
		if r.Status != RunDone {
			continue
		}
		f, err := nm.ReadFigures(RunPath(root, r))
		if err != nil {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s): %v: left out", r.Order, r.Variant, err))
			continue
		}
		if !f.Results.Valid {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s) is marked invalid: %s", r.Order, r.Variant, strings.Join(f.Results.Invalid, "; ")))
		}
		figs[r.Variant] = append(figs[r.Variant], f)
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
	rule := judge.RegressionRule{Threshold: idx.Config.Threshold, Seed: idx.Seed, MinRuns: MinRuns}
	var all []judge.Judgement
	for _, v := range idx.Variants {
		if idx.IsBase(v) {
			continue
		}
		vv := VariantVerdicts{Variant: v, Base: idx.baseFor(v)}
		for _, m := range nm.Metrics() {
			if len(values(figs[vv.Base], m.Key)) == 0 && len(values(figs[v], m.Key)) == 0 {
				continue // a metric of another workload (ooo_inclusion of a kv load)
			}
			j := judgeMetric(rule, m, nm.Unit(), figs[vv.Base], figs[v])
			vv.Judgements = append(vv.Judgements, j)
			if j.Verdict == judge.OutcomeRegression && judge.ExitCode([]judge.Judgement{j}, idx.Config.FailOn) != 0 {
				idx.Regressions = append(idx.Regressions, v+": "+m.Key)
			}
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
	idx.ExitCode = judge.ExitCode(all, idx.Config.FailOn)
	return nil
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
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", CompareFile, err)
	}
	return rundir.WriteAtomic(filepath.Join(root, CompareFile), append(data, '\n'))
}

// ReadCompareIndex reads compare.json, refusing a newer schema.
func ReadCompareIndex(root string) (*CompareIndex, error) {
	data, err := os.ReadFile(filepath.Join(root, CompareFile))
	if err != nil {
		return nil, err
	}
	var idx CompareIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("decode %s: %w", CompareFile, err)
	}
	if idx.SchemaVersion > CompareSchema {
		return nil, fmt.Errorf("%s: schema_version %d is newer than this benchnet reads (%d)", CompareFile, idx.SchemaVersion, CompareSchema)
	}
	return &idx, nil
}

// DirVariant is one variant of `compare DIR_A DIR_B …`: a name and its
// finished run directories (repeats).
type DirVariant struct {
	Name string
	Dirs []string
}

// CompareDirs judges finished run directories: the first variant is the
// base. Their manifests must differ only in the keys a variant exists to
// change (releases, node config, app, genesis) unless force; a machine that
// differs is a warning. The index is written into a new compare directory
// under output.
func CompareDirs(vars []DirVariant, cfg *Compare, output string, force bool, now time.Time) (string, *CompareIndex, error) {
	if len(vars) < 2 {
		return "", nil, errors.New("compare needs two or more run directories")
	}
	idx := &CompareIndex{SchemaVersion: CompareSchema, Kind: "compare", Source: "dirs", Config: *cfg, Seed: CompareSeed, Complete: true}
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
	root, err := claimDir(output, now.UTC().Format("20060102-150405")+"-"+idx.Name+"-compare")
	if err != nil {
		return "", nil, err
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
			k, err := RunKind(d)
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

// chainVariantKey reports whether a dotted manifest path is one a variant
// of a CometBFT testnet exists to change.
func chainVariantKey(path string) bool {
	parts := strings.Split(path, ".")
	switch {
	case parts[0] == "name" || parts[0] == "genesis" || parts[0] == "variants":
		return true
	case parts[0] == "node" && len(parts) >= 3:
		return parts[2] == "release" || parts[2] == "config" || parts[2] == "app"
	}
	return false
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
