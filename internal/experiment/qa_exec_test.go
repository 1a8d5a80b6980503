package experiment

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// qaTestbeds are the QA tests' steady and rotating testbeds and the quick
// profile over the steady one's [qa] table, adaptive repeats off.
func qaTestbeds(t *testing.T) (m, rm *manifest.Manifest, q *QA) {
	t.Helper()
	m, err := manifest.Parse("qa.toml", []byte(qaSteadyManifest))
	if err != nil {
		t.Fatal(err)
	}
	if rm, err = manifest.Parse("qa-rotate.toml", []byte(qaRotateManifest)); err != nil {
		t.Fatal(err)
	}
	if q, err = QAFromManifest(m, QuickQA()); err != nil {
		t.Fatal(err)
	}
	q.MaxRepeats = q.Repeats
	return m, rm, q
}

// newTestQA is an A/A QA of the test testbeds with the quick profile
// (edit changes its settings before its steps are chosen) and a lab of
// fake chains committing 1000 tx/s under overload: stop, when set, is
// asked before every measurement and cancels ctx when it says so.
func newTestQA(t *testing.T, edit func(q *QA), cancel context.CancelCauseFunc, stop func(m *manifest.Manifest) bool) (*QARun, Env, *int) {
	t.Helper()
	m, rm, q := qaTestbeds(t)
	if edit != nil {
		edit(q)
	}
	x := &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa", Name: "qa",
		Baseline: rundir.QABuild{Ref: "cometbft@v1.0.1"}, Candidate: rundir.QABuild{Ref: "cometbft@v1.0.1"},
		Config: q.ConfigJSON(), Steps: QASteps(q, true)}
	rng := rand.New(rand.NewPCG(5, 6))
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	n := new(int)
	interrupt := func(ctx context.Context, m *manifest.Manifest) error {
		*n++
		if stop != nil && stop(m) {
			cancel(errors.New("interrupt"))
			return context.Cause(ctx)
		}
		return nil
	}
	lab := qaLab{
		open: func(bm *manifest.Manifest, root string) Opener {
			return func(ctx context.Context) (Testnet, error) {
				if err := interrupt(ctx, bm); err != nil {
					return nil, err
				}
				return (&fakeNet{capacity: 1500, root: root}).open(ctx)
			}
		},
		measure: func(ctx context.Context, vm *manifest.Manifest, runsRoot string) (string, error) {
			if err := interrupt(ctx, vm); err != nil {
				return "", err
			}
			dir := filepath.Join(runsRoot, vm.Name+"-"+time.Duration(*n).String())
			if vm.Rotate != nil {
				fakeRotateRun(t, dir, vm.Raw, []float64{3, 3, 3})
			} else {
				fakeRun(t, dir, vm.Raw, 1000, 200, rng)
			}
			return dir, nil
		}}
	return &QARun{Index: x, Config: q, Manifest: m, Rotate: rm}, Env{Lab: lab, Output: t.TempDir(), Now: func() time.Time { return now }}, n
}

// The executor claims <time>-<name>-qa under env.Output, writes its inputs
// first, runs every step as its experiment (a grid per build with --grid:
// a sweep directory each) and returns the overall result as the verdict.
func TestQAExecutorGrid(t *testing.T) {
	r, env, _ := newTestQA(t, func(q *QA) { q.Grid, q.Rates = true, []float64{400, 800, 1200, 1600, 2000} }, nil, nil)
	ex, err := r.NewExecutor(env)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "qa" || !strings.HasSuffix(res.Dir, "-qa-qa") || filepath.Dir(res.Dir) != env.Output {
		t.Errorf("result %+v, want a <time>-qa-qa directory under %s", res, env.Output)
	}
	for _, f := range []string{rundir.Manifest, rotateFile, rundir.QAFile} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("the QA directory lacks %s", f)
		}
	}
	x := r.Index
	if !res.Complete || res.Verdict == Fail || res.Verdict == "" {
		t.Errorf("A/A grid QA: %+v (%v)", res, x.Results)
	}
	if want := QAOutcome(res.Dir, x); res.Verdict != want.Verdict || res.Verdict.ExitCode() != x.ExitCode {
		t.Errorf("verdict %s (exit %d), qa.json says %s (exit %d)", res.Verdict, res.Verdict.ExitCode(), x.Overall, x.ExitCode)
	}
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		s := x.Step("saturation-" + b)
		idx, err := rundir.SweepRecord.Read(rundir.StepPath(res.Dir, s))
		if err != nil || s.Status != rundir.StepDone || !idx.Complete || idx.Kind == "search" || len(idx.Cells) != 5 {
			t.Fatalf("%s: %+v, index %v", s.Name, s, err)
		}
	}
	if x.Saturation == nil || x.Saturation.Rate <= 0 {
		t.Errorf("no steady load from the grids: %+v", x.Saturation)
	}
}

// A QA interrupted inside its saturation search finishes that search (one
// directory per build under steps/saturation) when resumed, and a QA that
// reuses its baseline searches the candidate alone there.
func TestQAExecutorSearchResumeAndReuse(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	opened := 0
	r, env, n := newTestQA(t, nil, cancel, func(m *manifest.Manifest) bool {
		if m.Load.Duration.Duration == 5*time.Second { // a probe
			opened++
		}
		return opened == 3
	})
	ex, err := r.NewExecutor(env)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(ctx)
	if err == nil || res.Dir == "" || res.Complete {
		t.Fatalf("the interrupted QA: %+v, %v", res, err)
	}
	// The paired QA searches the baseline only.
	if s := r.Index.Step("saturation-baseline"); s.Dir != filepath.Join(rundir.QAStepsDir, "saturation", rundir.QABaseline) || s.Status == rundir.StepDone {
		t.Fatalf("%s after the interrupt: %+v, want not done in steps/saturation/baseline", s.Name, s)
	}
	probes := func(b string) int {
		idx, err := rundir.SweepRecord.Read(filepath.Join(res.Dir, rundir.QAStepsDir, "saturation", b))
		if err != nil {
			t.Fatal(err)
		}
		return len(idx.Cells)
	}
	before := probes(rundir.QABaseline)

	again, err := ReadQARun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	renv := env
	renv.Resume = res.Dir
	ex, err = again.NewExecutor(renv)
	if err != nil {
		t.Fatal(err)
	}
	done, err := ex.Run(context.Background())
	if err != nil || !done.Complete || done.Dir != res.Dir {
		t.Fatalf("resumed: %+v, %v", done, err)
	}
	if probes(rundir.QABaseline) < before || *n == 0 {
		t.Errorf("the resumed search started again: %d probes, %d before", probes(rundir.QABaseline), before)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, rundir.QAStepsDir, "saturation-2")); err == nil {
		t.Error("the resumed search claimed a second saturation directory")
	}

	if s := again.Index.Step("saturation-baseline"); s.Status != rundir.StepDone || !strings.Contains(s.Note, "operating point") {
		t.Errorf("the resumed baseline search: %+v", s)
	}

	// --baseline-from the finished QA: its baseline search is reused, no
	// search runs, and the pairs decide.
	r2, env2, n2 := newTestQA(t, nil, nil, nil)
	r2.BaselineFrom = res.Dir
	ex, err = r2.NewExecutor(env2)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := ex.Run(context.Background())
	if err != nil || !res2.Complete {
		t.Fatalf("reused baseline: %+v, %v", res2, err)
	}
	if s := r2.Index.Step("saturation-baseline"); !s.Reused || !strings.HasPrefix(s.Dir, res.Dir) {
		t.Errorf("baseline step %+v, want reused from %s", s, res.Dir)
	}
	if _, err := os.Stat(filepath.Join(res2.Dir, rundir.QAStepsDir, "saturation")); err == nil {
		t.Error("a QA with a reused baseline searched again")
	}
	if s := r2.Index.Step(PairedStep); s.Status != rundir.StepDone || *n2 == 0 {
		t.Errorf("paired step %+v after %d measurements", s, *n2)
	}
	if r2.Index.Overall == judge.ResultFail {
		t.Errorf("A/A with a reused baseline failed: %+v", r2.Index.Results)
	}
}
