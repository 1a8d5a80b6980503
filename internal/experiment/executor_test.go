package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeLab measures sweep cells on fakeNet and whole runs with fakeMeasure.
type fakeLab struct {
	net    *fakeNet
	steady func(ctx context.Context, m *manifest.Manifest, root string) (string, error)
}

func (l *fakeLab) Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error) {
	l.net.root = filepath.Dir(dir) // fakeNet opens under root/testnets
	return l.net.open(ctx)
}

func (l *fakeLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	return l.steady(ctx, m, dir)
}

// TestComposeSearchThenCompare is the composition a qa executor makes: a
// parent claims its directory, runs a search executor into one step
// directory and a compare executor into another, with its own env passed
// down, and reads both records back.
func TestComposeSearchThenCompare(t *testing.T) {
	m, err := manifest.Parse("cmp.toml", []byte(cmpManifest))
	if err != nil {
		t.Fatal(err)
	}
	steady, _ := fakeMeasure(t, 600, 300)
	now := func() time.Time { return time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC) }
	env := Env{Lab: &fakeLab{net: &fakeNet{capacity: 500}, steady: steady}, Output: t.TempDir(), Now: now}
	parent, err := rundir.ClaimStamped(env.Output, "cmp-qa", now())
	if err != nil {
		t.Fatal(err)
	}

	search := DefaultSweep()
	search.Search, search.Connections, search.Rates = true, []int{1}, nil
	search.StartRate, search.Precision, search.MinRepeats = 100, 0.2, 1
	search.Duration = rundir.Duration{Duration: 5 * time.Second}
	senv, err := env.Sub(parent, "1-saturation")
	if err != nil {
		t.Fatal(err)
	}
	sx, err := search.NewExecutor(m, senv)
	if err != nil {
		t.Fatal(err)
	}
	sres, err := sx.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sres.Kind != "search" || sres.Dir != filepath.Join(parent, "1-saturation") || !sres.Complete || sres.Verdict != Pass {
		t.Fatalf("search result %+v", sres)
	}
	x, err := rundir.SweepRecord.Read(sres.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if x.Search == nil || !x.Search.Done || x.Search.Low < 400 || x.Search.High > 600 {
		t.Fatalf("search state %+v, want a bracket around the fake's 500 tx/s", x.Search)
	}

	cenv, err := env.Sub(parent, "2-steady")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultCompare()
	cx, err := cfg.NewExecutor(m, cenv)
	if err != nil {
		t.Fatal(err)
	}
	cres, err := cx.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	idx, err := rundir.CompareRecord.Read(cres.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if cres.Dir != filepath.Join(parent, "2-steady") || !idx.Complete || len(idx.Runs) != 6 {
		t.Fatalf("compare result %+v, %d runs", cres, len(idx.Runs))
	}
	// The slow variant commits 40 % less: a regression, exit 3 at the root.
	if cres.Verdict != Fail || !strings.Contains(cres.Why, "slow: tps") {
		t.Fatalf("compare verdict %s (%s), want fail naming slow: tps", cres.Verdict, cres.Why)
	}
	if code, ok := ExitCodeOf(cres.Err()); !ok || code != judge.ExitRegression {
		t.Errorf("exit code %d %v, want %d", code, ok, judge.ExitRegression)
	}
	// A second step of the same name gets its own directory.
	again, err := env.Sub(parent, "2-steady")
	if err != nil || again.Dir != filepath.Join(parent, "2-steady-2") {
		t.Errorf("second claim %q, %v", again.Dir, err)
	}
}

// TestCompareInterruptResume: Ctrl-C keeps the finished runs; Resume runs
// only the rest and judges them all.
func TestCompareInterruptResume(t *testing.T) {
	m, err := manifest.Parse("cmp.toml", []byte(cmpManifest))
	if err != nil {
		t.Fatal(err)
	}
	steady, order := fakeMeasure(t, 600, 300)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stop")
	calls := 0
	lab := &fakeLab{steady: func(c context.Context, vm *manifest.Manifest, root string) (string, error) {
		calls++
		if calls == 3 {
			cancel(stop)
			return "", context.Cause(c)
		}
		return steady(c, vm, root)
	}}
	env := Env{Lab: lab, Output: t.TempDir()}
	x, err := DefaultCompare().NewExecutor(m, env)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(ctx)
	if !errors.Is(err, stop) || res.Complete || res.Dir == "" {
		t.Fatalf("interrupted run: %+v, %v", res, err)
	}
	idx, err := rundir.CompareRecord.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, r := range idx.Runs {
		if r.Status == rundir.RunDone {
			done++
		}
	}
	if done != 2 || idx.Complete {
		t.Fatalf("after the interrupt: %d done, complete %v", done, idx.Complete)
	}
	renv := env
	renv.Resume = res.Dir
	rx, err := DefaultCompare().NewExecutor(nil, renv)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := rx.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res2.Dir != res.Dir || !res2.Complete || res2.Verdict != Fail {
		t.Fatalf("resumed: %+v", res2)
	}
	if len(*order) != 6 {
		t.Errorf("measured %d runs in all (%v), want 6: the finished ones are kept", len(*order), *order)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, rundir.Manifest)); err != nil {
		t.Error(err)
	}
}

func TestVerdictExitCodes(t *testing.T) {
	for v, want := range map[Verdict]int{Pass: 0, Fail: 3, Inconclusive: 4, "": 0} {
		if got := v.ExitCode(); got != want {
			t.Errorf("%q: exit %d, want %d", v, got, want)
		}
		err := Result{Verdict: v}.Err()
		if code, ok := ExitCodeOf(err); (err != nil) != ok || code != want {
			t.Errorf("%q: ExitCodeOf = %d %v", v, code, ok)
		}
	}
}
