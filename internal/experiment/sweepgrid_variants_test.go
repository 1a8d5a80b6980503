package experiment

import (
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A grid over two variants and two durations is one experiment: every cell
// runs on its variant's testnet with its duration, and each variant is
// judged on its own cells (the slow build saturates where the fast one
// does not).
func TestRunGridVariants(t *testing.T) {
	cfg := grid2x2()
	cfg.Connections, cfg.Rates, cfg.Repeats = []int{1}, []float64{200, 400}, 1
	cfg.Variants = []string{"fast", "slow"}
	cfg.Durations = []rundir.Duration{{Duration: 5 * time.Second}, {Duration: 10 * time.Second}}
	d, fast, ctx := newSweepDir(t, cfg)
	slow := &fakeNet{capacity: 300, root: d.Path}
	fast.capacity = 1000
	if n := len(d.Index.Cells); n != 2*2*2 {
		t.Fatalf("%d cells, want 8 (2 variants x 2 durations x 2 rates)", n)
	}
	r := &Runner{Dir: d, Variants: map[string]VariantEnv{
		"fast": {Open: fast.open}, "slow": {Open: slow.open}}}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(fast.measured) != 4 || len(slow.measured) != 4 {
		t.Fatalf("measured fast %d, slow %d, want 4 each", len(fast.measured), len(slow.measured))
	}
	x, err := rundir.SweepRecord.Read(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	durs := map[time.Duration]int{}
	for _, l := range append(fast.measured, slow.measured...) {
		durs[l.Duration.Duration]++
	}
	if durs[5*time.Second] != 4 || durs[10*time.Second] != 4 {
		t.Errorf("durations measured %v, want 4 of 5s and 4 of 10s", durs)
	}
	if len(x.Groups) != 4 {
		t.Fatalf("%d groups, want 4", len(x.Groups))
	}
	for _, g := range x.Groups {
		want := 400.0
		if g.Variant == "slow" {
			want = 200
		}
		if len(g.Grid.Lines) != 1 || g.Grid.Lines[0].Sustainable != want {
			t.Errorf("%s %s: lines %+v, want sustainable %g", g.Variant, g.Duration, g.Grid.Lines, want)
		}
		if n := len(x.Group(g).Cells); n != 2 {
			t.Errorf("%s %s: %d cells in the group, want 2", g.Variant, g.Duration, n)
		}
	}
	for _, c := range x.Cells {
		if c.Variant == "slow" && c.Rate == 400 && (c.Verdict == nil || c.Verdict.State != judge.Saturated) {
			t.Errorf("cell %s: verdict %+v, want saturated", c.ID, c.Verdict)
		}
	}
	// Only one testnet up at a time: every switch of variant closed one.
	if fast.opened+slow.opened != fast.closed+slow.closed {
		t.Errorf("opened %d+%d, closed %d+%d", fast.opened, slow.opened, fast.closed, slow.closed)
	}
}
