package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeNet is a testnet that commits everything up to capacity tx/s offered
// and a proportional share above it. It is the fake of the layer below
// (one measurement), so these tests check the experiment layer only.
type fakeNet struct {
	capacity float64
	opened   int
	closed   int
	cooled   int
	measured []manifest.Load
	// interruptAt cancels the sweep's context during that measurement (1-based).
	interruptAt int
	cancel      context.CancelCauseFunc
	root        string
}

var errStop = errors.New("stop")

func (f *fakeNet) open(ctx context.Context) (Testnet, error) {
	f.opened++
	dir := filepath.Join(f.root, rundir.SweepNets, fmt.Sprintf("net%d", f.opened))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &fakeEnv{f: f, dir: dir}, nil
}

type fakeEnv struct {
	f   *fakeNet
	dir string
}

func (e *fakeEnv) RunDir() string                  { return e.dir }
func (e *fakeEnv) Close(ctx context.Context) error { e.f.closed++; return nil }
func (e *fakeEnv) Cooldown(ctx context.Context, limit time.Duration) (time.Duration, error) {
	e.f.cooled++
	return 1500 * time.Millisecond, nil
}

func (e *fakeEnv) Measure(ctx context.Context, dir *rundir.Dir, l manifest.Load) (*rundir.Results, error) {
	f := e.f
	f.measured = append(f.measured, l)
	if err := dir.WriteFile(rundir.ResultsFile, []byte("{}\n")); err != nil {
		return nil, err
	}
	offered := float64(l.Connections) * l.Rate
	sent := int(offered * l.Duration.Seconds())
	committed := sent
	p50 := 700.0
	if offered > f.capacity {
		committed = int(float64(sent) * f.capacity / offered)
		p50 = 700 * offered / f.capacity
	}
	res := &rundir.Results{
		Accounting:  rundir.Accounting{Sent: sent, Committed: committed, Lost: sent - committed},
		TxPerSecond: float64(committed) / l.Duration.Seconds(),
		Latency:     rundir.Stats{P50: p50, P95: 1.5 * p50, P99: 2 * p50},
		Valid:       true,
	}
	for i := 0; i < l.Connections; i++ {
		res.Load = append(res.Load, rundir.ConnStats{TargetRate: l.Rate})
	}
	if len(f.measured) == f.interruptAt {
		f.cancel(errStop)
		return res, errStop
	}
	return res, nil
}

func newSweepDir(t *testing.T, cfg Sweep) (*Dir, *fakeNet, context.Context) {
	t.Helper()
	root := t.TempDir()
	d, err := Create(root, "quickstart", time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	d.Index = NewIndex("quickstart", 1, cfg, time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC))
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	return d, &fakeNet{capacity: 500, cancel: cancel, root: d.Path}, ctx
}

func grid2x2() Sweep {
	cfg := *DefaultSweep()
	cfg.Connections, cfg.Rates, cfg.Repeats = []int{1, 2}, []float64{200, 400}, 2
	cfg.Duration = rundir.Duration{Duration: 10 * time.Second}
	return cfg
}

func TestOrder(t *testing.T) {
	cfg := grid2x2()
	cfg.Connections, cfg.Rates, cfg.Repeats = []int{1, 2, 4}, []float64{100, 200, 400, 800}, 3
	a, b, other := cfg.Order(1), cfg.Order(1), cfg.Order(2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different order")
	}
	if reflect.DeepEqual(a, other) {
		t.Error("seeds 1 and 2 give the same order")
	}
	// Every repeat is a block holding each point once, so repeats interleave.
	for rep := 0; rep < 3; rep++ {
		seen := map[string]bool{}
		for _, c := range a[rep*12 : (rep+1)*12] {
			if c.Repeat != rep+1 {
				t.Fatalf("order %d: repeat %d in block %d", c.Order, c.Repeat, rep+1)
			}
			seen[fmt.Sprintf("%d/%g", c.Connections, c.Rate)] = true
		}
		if len(seen) != 12 {
			t.Fatalf("block %d covers %d points, want 12", rep+1, len(seen))
		}
	}
	// Randomised, not the nested-loop order (load would follow time).
	ascending := true
	for i := 1; i < 12; i++ {
		if a[i].Connections*int(a[i].Rate) < a[i-1].Connections*int(a[i-1].Rate) {
			ascending = false
		}
	}
	if ascending {
		t.Error("first block is in ascending load order")
	}
}

func TestRunGrid(t *testing.T) {
	d, f, ctx := newSweepDir(t, grid2x2())
	r := &Runner{Dir: d, Base: manifest.Load{Size: 1024, Warmup: rundir.Duration{Duration: 30 * time.Second}}, Open: f.open}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if f.opened != 1 || f.closed != 1 || f.cooled != 7 {
		t.Errorf("opened %d closed %d cooled %d, want 1, 1, 7", f.opened, f.closed, f.cooled)
	}
	// Only the first cell on a testnet warms up; the cool-down covers the rest.
	for i, l := range f.measured {
		if want := i == 0; (l.Warmup.Duration > 0) != want {
			t.Errorf("measurement %d: warm-up %s", i+1, l.Warmup)
		}
		if l.Size != 1024 || l.Shape != "constant" || l.Count != 0 {
			t.Errorf("measurement %d: load %+v does not keep the base", i+1, l)
		}
	}
	x, err := rundir.SweepRecord.Read(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Complete || len(x.Cells) != 8 || len(x.Testnets) != 1 {
		t.Fatalf("complete %v, %d cells, testnets %v", x.Complete, len(x.Cells), x.Testnets)
	}
	for _, c := range x.Cells {
		fg := c.Figures
		if c.Status != rundir.CellDone || fg == nil || c.Verdict == nil {
			t.Fatalf("cell %s: %s", c.ID, c.Status)
		}
		if fg.Sent != fg.Committed+fg.Rejected+fg.Lost {
			t.Errorf("cell %s: sent %d != %d + %d + %d", c.ID, fg.Sent, fg.Committed, fg.Rejected, fg.Lost)
		}
		if fg.Offered != float64(c.Connections)*c.Rate {
			t.Errorf("cell %s: offered %g", c.ID, fg.Offered)
		}
		wantState := judge.OK
		if fg.Offered > 500 {
			wantState = judge.Saturated
		}
		if c.Verdict.State != wantState {
			t.Errorf("cell %s (offered %g): %s, want %s", c.ID, fg.Offered, c.Verdict.State, wantState)
		}
		if _, err := os.Stat(filepath.Join(d.Path, c.RunDir, rundir.ResultsFile)); err != nil {
			t.Errorf("cell %s: run dir: %v", c.ID, err)
		}
		if c.Order > 1 && c.CooldownSec != 1.5 {
			t.Errorf("cell %s: cooldown %g", c.ID, c.CooldownSec)
		}
	}
	// 1x400 and 2x200 offer 400 tx/s, 2x400 (800) is over capacity.
	g := x.Grid
	if g == nil || g.Chosen == nil || g.Chosen.Offered != 400 || g.Chosen.Connections != 1 || g.Chosen.TPS.N != 2 {
		t.Fatalf("grid %+v", g)
	}
}

func TestRunFresh(t *testing.T) {
	cfg := grid2x2()
	cfg.Fresh, cfg.Repeats = true, 1
	d, f, ctx := newSweepDir(t, cfg)
	r := &Runner{Dir: d, Base: manifest.Load{Warmup: rundir.Duration{Duration: time.Second}}, Open: f.open}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if f.opened != 4 || f.closed != 4 || f.cooled != 0 || len(d.Index.Testnets) != 4 {
		t.Errorf("opened %d closed %d cooled %d testnets %d, want 4, 4, 0, 4", f.opened, f.closed, f.cooled, len(d.Index.Testnets))
	}
	for i, l := range f.measured {
		if l.Warmup.Duration == 0 {
			t.Errorf("fresh measurement %d skipped its warm-up", i+1)
		}
	}
}

func TestInterruptAndResume(t *testing.T) {
	d, f, ctx := newSweepDir(t, grid2x2())
	f.interruptAt = 3
	r := &Runner{Dir: d, Open: f.open}
	err := r.Run(ctx)
	if !errors.Is(err, errStop) {
		t.Fatalf("interrupted run: %v", err)
	}
	if f.closed != 1 {
		t.Errorf("testnet closed %d times after the interrupt, want 1", f.closed)
	}
	x, err := rundir.SweepRecord.Read(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, c := range x.Cells {
		states = append(states, c.Status)
	}
	want := []string{rundir.CellDone, rundir.CellDone, rundir.CellInterrupted, rundir.CellPending, rundir.CellPending, rundir.CellPending, rundir.CellPending, rundir.CellPending}
	if !reflect.DeepEqual(states, want) || x.Complete {
		t.Fatalf("states %v complete %v, want %v", states, x.Complete, want)
	}
	kept := x.Cells[0]
	interrupted := x.Cells[2].RunDir

	// --resume: a new process opens the directory and finishes it.
	d2, err := Open(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	f2 := &fakeNet{capacity: 500, root: d.Path}
	f2.opened = 1 // the second testnet gets its own directory
	if err := (&Runner{Dir: d2, Open: f2.open}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f2.measured) != 6 {
		t.Errorf("resume measured %d cells, want 6 (1 interrupted + 5 pending)", len(f2.measured))
	}
	x2, _ := rundir.SweepRecord.Read(d.Path)
	if !x2.Complete || len(x2.Testnets) != 2 {
		t.Fatalf("after resume: complete %v, testnets %v", x2.Complete, x2.Testnets)
	}
	if !reflect.DeepEqual(x2.Cells[0].Figures, kept.Figures) || x2.Cells[0].RunDir != kept.RunDir {
		t.Error("resume changed a finished cell")
	}
	c3 := x2.Cells[2]
	if c3.Status != rundir.CellDone || c3.RunDir == interrupted || !strings.Contains(strings.Join(c3.Notes, " "), interrupted) {
		t.Errorf("re-run cell: %s in %s, notes %q (interrupted attempt in %s)", c3.Status, c3.RunDir, c3.Notes, interrupted)
	}
	if _, err := os.Stat(filepath.Join(d.Path, interrupted)); err != nil {
		t.Errorf("interrupted attempt not kept: %v", err)
	}
}

func TestRunSearch(t *testing.T) {
	cfg := *DefaultSweep()
	cfg.Search, cfg.Connections, cfg.Rates = true, []int{1}, nil
	cfg.StartRate, cfg.MinRate, cfg.MaxRate, cfg.Precision = 100, 10, 2000, 0.05
	cfg.MinRepeats, cfg.MaxRepeats, cfg.Budget = 1, 3, 30
	cfg.Duration = rundir.Duration{Duration: 10 * time.Second}
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	d, f, ctx := newSweepDir(t, cfg)
	f.capacity = 730
	if err := (&Runner{Dir: d, Open: f.open}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := rundir.SweepRecord.Read(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	st := x.Search
	if st == nil || st.Outcome != judge.Found {
		t.Fatalf("search %+v", st)
	}
	// The rule holds up to capacity/0.99 (737 tx/s): the bracket holds it.
	if !(st.Low <= 737.4 && 730 < st.High) || (st.High-st.Low)/st.Low > 0.05 {
		t.Errorf("bracket [%g, %g) for a capacity of 730", st.Low, st.High)
	}
	if len(x.Cells) != st.Runs || len(x.Cells) > cfg.Budget {
		t.Errorf("%d cells, %d runs", len(x.Cells), st.Runs)
	}
	for i, c := range x.Cells {
		if c.Probe < 1 || c.Rate != st.Probes[c.Probe-1].Rate || c.Order != i+1 {
			t.Errorf("cell %d: probe %d rate %g", i+1, c.Probe, c.Rate)
		}
	}
}

func TestValidateAndDecode(t *testing.T) {
	bad := grid2x2()
	bad.Connections = []int{0, 2, 2}
	bad.Rates = nil
	bad.Duration = rundir.Duration{Duration: time.Millisecond}
	bad.MinCommitted = 2
	var msgs []string
	for _, e := range bad.Validate() {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"connections: 0", "connections: 2 given twice", "rates: give at least one", "duration: 1ms", "min_committed"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
	s := grid2x2()
	s.Search = true
	if errs := s.Validate(); len(errs) < 2 {
		t.Errorf("search with 2 connections and rates: %v", errs)
	}

	cfg, err := Decode("sweep", []byte("connections = [1, 2]\nrates = [100.0]\nduration = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	sw := cfg.(*Sweep)
	if !reflect.DeepEqual(sw.Connections, []int{1, 2}) || sw.Duration.Duration != 5*time.Second || sw.Repeats != 1 {
		t.Errorf("decoded %+v", sw)
	}
	if _, err := Decode("sweep", []byte("rates = [100.0]\nrepeat = 3\n")); err == nil || !strings.Contains(err.Error(), "line 2: repeat: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := Decode("nope", nil); err == nil || !strings.Contains(err.Error(), "sweep") {
		t.Errorf("unknown kind: %v", err)
	}
}
