package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// qa records every done step of a QA directory under the QA as source:
// the saturation searches (sweeps), the paired runs (one record per build,
// a pair's runs its repeats), the steady and latency-emulation compares
// and the rotating runs. A step reused from another QA (--baseline-from)
// is that QA's: it is left to it.
func (b *Batch) qa(ctx context.Context, root string) error {
	x, err := rundir.QARecord.Read(root)
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	if !x.Complete {
		return &UnfinishedError{Dir: root, Missing: rundir.QAFile + " is not complete", Hint: "'benchnet qa --resume " + root + "' runs the remaining steps"}
	}
	fallback, _ := os.ReadFile(filepath.Join(root, rundir.Manifest))
	for i := range x.Steps {
		s := &x.Steps[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case s.Status != rundir.StepDone:
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: step %s is %s", root, s.Name, s.Status))
			continue
		case s.Reused:
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: step %s is reused from %s: recorded with it", root, s.Name, s.Dir))
			continue
		}
		sc := scope{source: root, prefix: s.Name + "/", step: qaStep(s.Name), scenario: x.Name}
		if s.Build == rundir.QABaseline || s.Build == rundir.QACandidate {
			sc.variant = s.Build
		}
		dir := rundir.StepPath(root, s)
		switch s.Kind {
		case "sweep":
			err = b.sweep(ctx, dir, sc)
		case "compare":
			err = b.compare(ctx, dir, sc)
		case "run":
			err = b.run(dir, sc, "", fallback)
		case "pairs":
			err = b.pairs(ctx, root, x, sc, fallback)
		default:
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: step %s of kind %q is not recorded by this benchnet", root, s.Name, s.Kind))
		}
		if err != nil {
			return fmt.Errorf("qa %s, step %s: %w", root, s.Name, err)
		}
	}
	return nil
}

// qaStep is a step's name without its build: saturation-baseline and
// saturation-candidate are one step of two builds.
func qaStep(name string) string {
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		if s, ok := strings.CutSuffix(name, "-"+b); ok {
			return s
		}
	}
	return name
}

// PairRate is the value key of a QA pair's overload rate (tx/s per
// connection): the pairs of one QA may run at raised rates, and two QAs at
// different ones.
const PairRate = "pair_rate"

// pairs records the saturation step's paired runs: per build, pair i is
// repeat i, with the run's judged values and the busy-span throughput the
// paired rule decided on (busy_tps). A side excluded from the decision
// keeps its reason.
func (b *Batch) pairs(ctx context.Context, root string, x *rundir.QAIndex, sc scope, fallback []byte) error {
	sat := x.Saturation
	if sat == nil || len(sat.Pairs) == 0 {
		b.Skipped = append(b.Skipped, fmt.Sprintf("%s: the paired step ran no pair", root))
		return nil
	}
	for _, build := range []string{rundir.QABaseline, rundir.QACandidate} {
		bsc := sc
		bsc.variant = build
		var rec *Record
		for i, p := range sat.Pairs {
			if err := ctx.Err(); err != nil {
				return err
			}
			dir, tps, excluded := p.BaseDir, p.BaseTPS, p.BaseExcluded
			if build == rundir.QACandidate {
				dir, tps, excluded = p.CandDir, p.CandTPS, p.CandExcluded
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(root, dir)
			}
			ri, err := readRun(dir, fallback)
			if err != nil {
				return fmt.Errorf("pair %d, %s: %w", i+1, build, err)
			}
			if rec == nil {
				rec = ri.record(bsc, "qa", build)
			}
			ri.run.Repeat = i + 1
			ri.run.Values["busy_tps"] = tps
			if p.Rate > 0 {
				// The overload the pair ran at: a capacity under overload
				// is compared across sessions at one rate (the drift check).
				ri.run.Values[PairRate] = p.Rate
			}
			if excluded != "" {
				ri.run.Excluded = excluded
			}
			rec.Runs = append(rec.Runs, ri.run)
		}
		b.Records = append(b.Records, rec)
	}
	return nil
}
