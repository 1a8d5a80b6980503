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

// UsageError is bad input an executor refused before anything started
// (the CLI's exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// CheckLoads refuses a cell whose load the manifest's rules reject, naming
// the cell (before anything starts).
func (s *Sweep) CheckLoads(m *manifest.Manifest) error {
	rates := s.Rates
	if s.Search {
		rates = []float64{s.MinRate, s.MaxRate}
	}
	orig := m.Load
	defer func() { m.Load = orig }()
	durations := append([]rundir.Duration{}, s.Durations...)
	if len(durations) == 0 {
		durations = []rundir.Duration{s.Duration}
	}
	for _, c := range s.Connections {
		for _, r := range rates {
			for _, d := range durations {
				m.Load = s.CellLoad(orig, c, r)
				m.Load.Duration = d
				if errs := m.Validate(); len(errs) > 0 {
					return &UsageError{fmt.Errorf("cell c=%d r=%g duration %s: %w", c, r, d, errs)}
				}
			}
		}
	}
	return nil
}

// NewExecutor implements Runnable: a grid or a search (s.Search) on m's
// testnet. With env.Resume it finishes that sweep directory, its manifest
// and settings read from it (m and s are then ignored).
func (s *Sweep) NewExecutor(m *manifest.Manifest, env Env) (Executor, error) {
	if env.Lab == nil {
		return nil, errors.New("sweep: no lab to measure with")
	}
	x := &sweepExec{env: env}
	if env.Resume != "" {
		d, err := Open(env.Resume)
		if err != nil {
			return nil, &UsageError{err}
		}
		if x.m, err = loadCopy(d.Path); err != nil {
			return nil, err
		}
		x.d = d
		return x, nil
	}
	if m == nil {
		return nil, errors.New("sweep: no manifest")
	}
	if errs := s.Validate(); len(errs) > 0 {
		return nil, &UsageError{errors.Join(errs...)}
	}
	cfg := *s
	if !cfg.Search && m.HasVariants() {
		// A grid over [variants]: one experiment, every cell on each
		// variant's testnet, the variants' cells shuffled together.
		cfg.Variants = m.VariantNames()
		if err := cfg.checkVariantLoads(m); err != nil {
			return nil, err
		}
	} else if err := s.CheckLoads(m); err != nil {
		return nil, err
	}
	x.cfg, x.m = &cfg, m
	return x, nil
}

type sweepExec struct {
	env Env
	cfg *Sweep
	m   *manifest.Manifest
	d   *Dir
}

func (x *sweepExec) Run(ctx context.Context) (Result, error) {
	if x.d == nil {
		path, err := x.env.claim(x.m.Name+"-sweep", rundir.SweepCells, rundir.SweepNets)
		if err != nil {
			return Result{Kind: "sweep"}, fmt.Errorf("create sweep directory: %w", err)
		}
		x.d = &Dir{Path: path, Index: NewIndex(x.m.Name, x.m.Seed, *x.cfg, x.env.now())}
		if err := errors.Join(os.WriteFile(filepath.Join(path, rundir.Manifest), x.m.Raw, 0o644), x.d.Save()); err != nil {
			return x.result(), err
		}
	}
	if x.d.Index.Complete {
		fmt.Fprintf(x.env.log(), "%s is complete: nothing to measure\n", x.d.Path)
		return x.result(), nil
	}
	fmt.Fprintf(x.env.log(), "sweep %s: %s\n", x.d.Path, Describe(&x.d.Index))
	nets := filepath.Join(x.d.Path, rundir.SweepNets)
	variants, err := variantEnvs(x.m, x.d.Index.Config.Variants, x.env.Lab, nets)
	if err != nil {
		return x.result(), err
	}
	r := &Runner{Dir: x.d, Base: x.m.Load, Log: x.env.log(), Now: x.env.Now, Variants: variants, Judge: recordThresholds(x.m, x.env.log()),
		Open: func(ctx context.Context) (Testnet, error) { return x.env.Lab.Open(ctx, x.m, nets) }}
	err = r.Run(ctx)
	return x.result(), interrupted(ctx, err)
}

func (x *sweepExec) result() Result {
	idx := &x.d.Index
	res := Result{Kind: "sweep", Dir: x.d.Path, Complete: idx.Complete}
	idx.Judge()
	switch {
	case idx.Kind == "search" && idx.Search != nil:
		res.Kind = "search"
		res.Why = idx.Search.Outcome
	case idx.Grid != nil:
		res.Why = idx.Grid.Describe()
	}
	if res.Complete {
		res.Verdict = Pass // a sweep measures: it has no pass/fail rule of its own
	}
	// [thresholds]: each measured cell is judged; a failed one fails the
	// sweep (exit 3); a cell whose load generator could not keep up is
	// neither pass nor fail. A search's probes are not judged: finding
	// where the network stops keeping up is what it is for.
	var dirs []string
	for _, c := range idx.Cells {
		if idx.Kind != "search" && c.Status == rundir.CellDone && c.RunDir != "" {
			dirs = append(dirs, c.RunDir)
		}
	}
	var ve *VerdictError
	if terr := runsThresholdError(x.d.Path, dirs, true); errors.As(terr, &ve) {
		res.Verdict, res.Why = Fail, ve.Msg
	}
	return res
}

// Describe says in one line what a sweep measures.
func Describe(x *rundir.SweepIndex) string {
	c := x.Config
	if x.Kind == "search" {
		return fmt.Sprintf("search at c=%d from %g tx/s (max %g), %s per probe, precision %g %%", c.Connections[0], c.StartRate, c.MaxRate, c.Duration, c.Precision*100)
	}
	each := c.Duration.String() + " each"
	if len(c.Durations) > 0 {
		each = fmt.Sprintf("durations %v", c.Durations)
	}
	over := ""
	if len(c.Variants) > 0 {
		over = fmt.Sprintf(" x variants %v", c.Variants)
	}
	return fmt.Sprintf("%d cells (c %v x r %v%s x %d repeat(s)), %s, order from seed %d", len(x.Cells), c.Connections, c.Rates, over, c.Repeats, each, x.Seed)
}
