package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Batch is what one directory gives: its records, and the parts of it
// left out with why (a failed variant, a step reused from another QA).
type Batch struct {
	Dir     string
	Records []*Record
	Skipped []string
}

// UnfinishedError is a directory that cannot be recorded yet: what is
// missing, and how to finish it.
type UnfinishedError struct {
	Dir     string
	Missing string
	Hint    string
}

func (e *UnfinishedError) Error() string {
	s := fmt.Sprintf("%s is not finished: %s", e.Dir, e.Missing)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// scope is where the records of one directory go: the source they are
// keyed by, and what an enclosing QA step says of them.
type scope struct {
	source   string
	prefix   string // of Part: "steady/" inside a QA
	step     string
	variant  string
	scenario string // overrides the runs' plan name ("" keeps it)
}

// FromRunDir reads a finished directory of any kind benchnet writes (a
// run, a soak, a compare, a sweep or search, a soak over variants, a QA)
// into records. An unfinished one is an *UnfinishedError naming what is
// missing; a directory benchnet did not write is an error too.
func FromRunDir(ctx context.Context, dir string) (*Batch, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // one directory, one source, however it was named
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	b := &Batch{Dir: abs}
	sc := scope{source: abs}
	switch {
	case exists(abs, rundir.QAFile):
		err = b.qa(ctx, abs)
	case rundir.CompareRecord.Exists(abs):
		err = b.compare(ctx, abs, sc)
	case rundir.SweepRecord.Exists(abs):
		err = b.sweep(ctx, abs, sc)
	case rundir.SoakVariantsRecord.Exists(abs):
		err = b.soakVariants(ctx, abs, sc)
	case exists(abs, rundir.ResultsFile), exists(abs, rundir.Plan):
		err = b.run(abs, sc, "", nil)
	default:
		err = fmt.Errorf("%s is not a directory benchnet wrote: it has none of %s, %s, %s, %s, %s",
			abs, rundir.ResultsFile, rundir.CompareFile, rundir.SweepFile, rundir.SoakVariantsFile, rundir.QAFile)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func exists(dir, name string) bool {
	st, err := os.Stat(filepath.Join(dir, name))
	return err == nil && st.Mode().IsRegular()
}

// run records a run directory: a plain run, or a soak (soak.json beside
// results.json, its fit added to the values).
func (b *Batch) run(dir string, sc scope, part string, fallback []byte) error {
	ri, err := readRun(dir, fallback)
	if err != nil {
		return err
	}
	kind := "run"
	if rundir.SoakRecord.Exists(dir) {
		kind = "soak"
		soak, err := rundir.SoakRecord.Read(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		f := soak.Fit
		ri.run.Values["soak_decay_b"] = f.B
		if f.Decays && f.HalfLife > 0 {
			ri.run.Values["soak_half_life_sec"] = f.HalfLife
		}
	}
	if sc.step != "" {
		kind = "qa"
	}
	rec := ri.record(sc, kind, part)
	ri.run.Repeat = 1
	rec.Runs = []Run{ri.run}
	b.Records = append(b.Records, rec)
	return nil
}

// compare records one record per variant, its done runs the repeats.
func (b *Batch) compare(ctx context.Context, dir string, sc scope) error {
	idx, err := rundir.CompareRecord.Read(dir)
	if err != nil {
		return err
	}
	if !idx.Complete {
		return &UnfinishedError{Dir: dir, Missing: rundir.CompareFile + " is not complete", Hint: "'benchnet compare --resume " + dir + "' runs the rest"}
	}
	if sc.scenario == "" {
		sc.scenario = idx.Name
	}
	fallback, _ := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	kind := "compare"
	if sc.step != "" {
		kind = "qa"
	}
	runs := append([]rundir.CompareRun(nil), idx.Runs...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Repeat < runs[j].Repeat })
	for _, v := range idx.Variants {
		var rec *Record
		for _, r := range runs {
			if r.Variant != v || r.Status != rundir.RunDone {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			ri, err := readRun(r.RunPath(dir), fallback)
			if err != nil {
				return fmt.Errorf("compare %s, variant %s, run %d: %w", dir, v, r.Repeat, err)
			}
			if rec == nil {
				vsc := sc
				vsc.variant = v
				rec = ri.record(vsc, kind, "variant "+v)
			}
			ri.run.Repeat = r.Repeat
			rec.Runs = append(rec.Runs, ri.run)
		}
		if rec == nil {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: variant %s has no finished run", dir, v))
			continue
		}
		b.Records = append(b.Records, rec)
	}
	return nil
}

// soakVariants records each variant's soak run directory.
func (b *Batch) soakVariants(ctx context.Context, dir string, sc scope) error {
	idx, err := rundir.SoakVariantsRecord.Read(dir)
	if err != nil {
		return err
	}
	if !idx.Complete {
		return &UnfinishedError{Dir: dir, Missing: rundir.SoakVariantsFile + " is not complete"}
	}
	sc.scenario = idx.Name
	fallback, _ := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	for _, r := range idx.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.Status != rundir.RunDone {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: variant %s did not finish (%s)", dir, r.Variant, r.Status))
			continue
		}
		vsc := sc
		vsc.variant = r.Variant
		if err := b.run(filepath.Join(dir, r.RunDir), vsc, "variant "+r.Variant, fallback); err != nil {
			return fmt.Errorf("soak %s, variant %s: %w", dir, r.Variant, err)
		}
	}
	return nil
}
