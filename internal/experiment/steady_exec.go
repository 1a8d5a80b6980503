package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Experiments of one run (soak, rotate): the run directory is the
// experiment's directory, its record (soak.json, faults.json) beside
// results.json. A parent's env.Dir gets the run directory inside it.

// NewExecutor implements Runnable: one long constant load on m's testnet,
// then the decay fit (soak.json). With env.Resume (a soak's run directory
// that has its results.json) only the fit is redone.
func (s *Soak) NewExecutor(m *manifest.Manifest, env Env) (Executor, error) {
	if env.Lab == nil && env.Resume == "" {
		return nil, errors.New("soak: no lab to measure with")
	}
	cfg := *s
	x := &runExec{kind: "soak", env: env}
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, &UsageError{errors.Join(errs...)}
	}
	if env.Resume != "" && rundir.SoakVariantsRecord.Exists(env.Resume) {
		return newSoakVariants(cfg, nil, env)
	}
	if env.Resume == "" && m != nil && m.HasVariants() {
		return newSoakVariants(cfg, m, env)
	}
	x.after = func(runDir string, seed int64) (Result, error) {
		res, err := AnalyzeSoak(runDir, seed, cfg.Bootstrap)
		if err != nil {
			return Result{Kind: "soak", Dir: runDir}, err
		}
		fmt.Fprintf(env.log(), "soak: %s\n", res.Fit.Verdict)
		return Result{Kind: "soak", Dir: runDir, Complete: true, Verdict: Pass, Why: res.Fit.Verdict}, nil
	}
	if env.Resume != "" {
		return x, x.resume()
	}
	if m == nil {
		return nil, errors.New("soak: no manifest")
	}
	mm := *m
	mm.Load = cfg.Load(m.Load)
	if errs := mm.Validate(); len(errs) > 0 {
		return nil, &UsageError{errs}
	}
	x.m = &mm
	return x, nil
}

func init() {
	Register("rotate", func() Config { return &Rotate{} })
}

// Rotate runs a manifest's [rotate] table (nodes started from empty homes,
// caught up, stopped and wiped, cycle after cycle) under its load, and
// passes when every cycle caught up within its timeout.
type Rotate struct{}

// Kind implements Config.
func (r *Rotate) Kind() string { return "rotate" }

// Validate implements Config: the settings are the manifest's [rotate].
func (r *Rotate) Validate() []error { return nil }

// NewExecutor implements Runnable.
func (r *Rotate) NewExecutor(m *manifest.Manifest, env Env) (Executor, error) {
	if env.Lab == nil && env.Resume == "" {
		return nil, errors.New("rotate: no lab to measure with")
	}
	x := &runExec{kind: "rotate", env: env, after: rotateVerdict}
	if env.Resume != "" {
		return x, x.resume()
	}
	if m == nil || m.Rotate == nil {
		return nil, &UsageError{errors.New("rotate: the manifest has no [rotate] table")}
	}
	x.m = m
	return x, nil
}

// rotateVerdict: Fail when a cycle never caught up, Inconclusive when no
// cycle ran, else Pass.
func rotateVerdict(runDir string, _ int64) (Result, error) {
	res := Result{Kind: "rotate", Dir: runDir}
	d, err := rundir.Open(runDir)
	if err != nil {
		return res, err
	}
	f, err := d.ReadFaults()
	if err != nil {
		return res, err
	}
	res.Complete = true
	late := 0
	for _, c := range f.Cycles {
		if c.CatchUpS < 0 || c.Error != "" {
			late++
		}
	}
	switch {
	case len(f.Cycles) == 0:
		res.Verdict, res.Why = Inconclusive, "no rotate cycle ran"
	case late > 0:
		res.Verdict, res.Why = Fail, fmt.Sprintf("%d of %d cycles did not catch up", late, len(f.Cycles))
	default:
		res.Verdict, res.Why = Pass, fmt.Sprintf("all %d cycles caught up", len(f.Cycles))
	}
	return res, nil
}

// runExec is an experiment of one run: Steady, then after() on its run
// directory.
type runExec struct {
	kind   string
	env    Env
	m      *manifest.Manifest
	runDir string // set by a resume
	after  func(runDir string, seed int64) (Result, error)
}

// resume takes env.Resume as the finished run to judge again.
func (x *runExec) resume() error {
	dir := x.env.Resume
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultsFile)); err != nil {
		return &UsageError{fmt.Errorf("%s has no %s: the %s did not finish ('benchnet analyze %s' recovers a run's results; else start a new %s)", dir, rundir.ResultsFile, x.kind, dir, x.kind)}
	}
	m, err := loadCopy(dir)
	if err != nil {
		return err
	}
	x.m, x.runDir = m, dir
	return nil
}

func (x *runExec) Run(ctx context.Context) (Result, error) {
	if x.runDir != "" {
		return x.after(x.runDir, x.m.Seed)
	}
	parent := x.env.Dir
	if parent == "" {
		parent = x.env.output()
	}
	runDir, err := x.env.Lab.Steady(ctx, x.m, parent)
	res := Result{Kind: x.kind, Dir: runDir}
	if runDir == "" {
		return res, err
	}
	if _, serr := os.Stat(filepath.Join(runDir, rundir.ResultsFile)); serr != nil {
		return res, interrupted(ctx, err) // failed before the analysis: no figures to judge
	}
	res, aerr := x.after(runDir, x.m.Seed)
	if err != nil {
		res.Complete = false
	}
	// The run's [thresholds] (recorded in its results.json by the lab): a
	// failed one fails the soak or rotate like its own verdict.
	var ve *VerdictError
	if terr := RunsThresholdError("", []string{runDir}); errors.As(terr, &ve) && err == nil {
		if res.Verdict == Fail {
			res.Why += "; " + ve.Msg
		} else {
			res.Verdict, res.Why = Fail, ve.Msg
		}
	}
	return res, errors.Join(interrupted(ctx, err), aerr)
}
