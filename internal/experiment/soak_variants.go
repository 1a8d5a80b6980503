package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A soak of a manifest with [variants] runs each variant's soak in turn (the
// base first), each its own run directory with its own decay fit, under one
// soak-variants directory whose report sets the half-lives side by side.
// The runs follow each other (a soak is one long load: they cannot be
// interleaved), so a drift of the machine over the whole soak weighs on the
// later variants: repeat it in another order to tell.

type soakVariantsExec struct {
	env  Env
	cfg  Soak
	m    *manifest.Manifest
	root string
	idx  *rundir.SoakVariantsIndex
}

// newSoakVariants is the soak's executor for a manifest with [variants]
// (m), or to finish the soak-variants directory env.Resume.
func newSoakVariants(cfg Soak, m *manifest.Manifest, env Env) (Executor, error) {
	x := &soakVariantsExec{env: env, cfg: cfg, m: m}
	if env.Resume != "" {
		idx, err := rundir.SoakVariantsRecord.Read(env.Resume)
		if err != nil {
			return nil, &UsageError{err}
		}
		if x.m, err = loadCopy(env.Resume); err != nil {
			return nil, err
		}
		x.root, x.idx = env.Resume, idx
		d, err := time.ParseDuration(idx.Duration)
		if err != nil {
			return nil, fmt.Errorf("%s: duration %q: %w", rundir.SoakVariantsFile, idx.Duration, err)
		}
		x.cfg = Soak{Rate: idx.Rate, Connections: idx.Connections, Duration: rundir.Duration{Duration: d}, Bootstrap: idx.Bootstrap}
		return x, nil
	}
	for _, name := range m.VariantNames() {
		vm, err := m.Variant(name)
		if err != nil {
			return nil, &UsageError{fmt.Errorf("variant %s: %w", name, err)}
		}
		vm.Load = cfg.Load(vm.Load)
		if errs := vm.Validate(); len(errs) > 0 {
			return nil, &UsageError{fmt.Errorf("variant %s: %w", name, errs)}
		}
	}
	return x, nil
}

func (x *soakVariantsExec) Run(ctx context.Context) (Result, error) {
	if x.idx == nil {
		root, err := x.env.claim(x.m.Name+"-soak-variants", rundir.SoakVariantsRuns)
		if err != nil {
			return Result{Kind: "soak"}, fmt.Errorf("create soak directory: %w", err)
		}
		x.root = root
		labels := VariantLabels(x.m)
		x.idx = &rundir.SoakVariantsIndex{SchemaVersion: rundir.SoakVariantsSchema, Kind: "soak-variants", Name: x.m.Name,
			Rate: x.cfg.Rate, Connections: x.cfg.Connections, Duration: x.cfg.Duration.String(), Bootstrap: x.cfg.Bootstrap,
			Seed: x.m.Seed, Started: x.env.now().UTC().Format(time.RFC3339)}
		for _, name := range x.m.VariantNames() {
			x.idx.Runs = append(x.idx.Runs, rundir.SoakVariantRun{Variant: name, Label: labels[name], Status: rundir.RunPending})
		}
		if err := errors.Join(os.WriteFile(filepath.Join(root, rundir.Manifest), x.m.Raw, 0o644), x.save()); err != nil {
			return x.result(), err
		}
	}
	log := x.env.log()
	var errs []error
	for i := range x.idx.Runs {
		r := &x.idx.Runs[i]
		if r.Status == rundir.RunDone {
			// A resumed soak refits the runs it already has.
			if _, err := AnalyzeSoak(filepath.Join(x.root, r.RunDir), x.idx.Seed, x.cfg.Bootstrap); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.Variant, err))
			}
			continue
		}
		vm, err := x.m.Variant(r.Variant)
		if err != nil {
			return x.result(), err
		}
		vm.Load = x.cfg.Load(vm.Load)
		// The run directory names the variant, as compare's do.
		if len(x.m.Name)+1+len(r.Variant) <= 32 {
			vm.Name = x.m.Name + "-" + r.Variant
		} else {
			vm.Name = r.Variant
		}
		fmt.Fprintf(log, "\n== soak %d/%d: %s (%s)\n", i+1, len(x.idx.Runs), r.Variant, dashIfEmpty(r.Label))
		runDir, err := x.env.Lab.Steady(ctx, vm, filepath.Join(x.root, rundir.SoakVariantsRuns))
		if runDir != "" {
			r.RunDir, _ = filepath.Rel(x.root, runDir)
		}
		if err == nil {
			var res *rundir.SoakResult
			if res, err = AnalyzeSoak(runDir, x.idx.Seed, x.cfg.Bootstrap); err == nil {
				fmt.Fprintf(log, "soak %s: %s\n", r.Variant, res.Fit.Verdict)
			}
		}
		if err != nil {
			r.Status, r.Error = rundir.RunFailed, err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", r.Variant, err))
		} else {
			r.Status, r.Error = rundir.RunDone, ""
		}
		if serr := x.save(); serr != nil {
			return x.result(), serr
		}
		if ctx.Err() != nil {
			return x.result(), interrupted(ctx, errors.Join(errs...))
		}
	}
	x.idx.Complete = true
	for _, r := range x.idx.Runs {
		x.idx.Complete = x.idx.Complete && r.Status == rundir.RunDone
	}
	x.idx.Finished = x.env.now().UTC().Format(time.RFC3339)
	if err := x.save(); err != nil {
		errs = append(errs, err)
	}
	return x.result(), errors.Join(errs...)
}

func (x *soakVariantsExec) save() error { return rundir.SoakVariantsRecord.Write(x.root, x.idx) }

func (x *soakVariantsExec) result() Result {
	res := Result{Kind: "soak", Dir: x.root}
	if x.idx == nil {
		return res
	}
	res.Complete = x.idx.Complete
	var parts []string
	for _, r := range x.idx.Runs {
		why := r.Status
		if r.Status == rundir.RunDone {
			if s, err := rundir.SoakRecord.Read(filepath.Join(x.root, r.RunDir)); err == nil {
				why = s.Fit.Verdict
			}
		}
		parts = append(parts, r.Variant+": "+why)
	}
	res.Why = strings.Join(parts, "; ")
	if res.Complete {
		res.Verdict = Pass // a soak measures: it has no pass/fail rule of its own
	}
	return res
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
