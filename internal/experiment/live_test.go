package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

const subnet = "10.213.197.0/24"

// TestSweepQuickstart runs a 2 x 2 sweep on the quickstart testnet (real
// nodes) and checks sweep.json: every cell measured once on one testnet,
// exactly the configured txs sent and accounted, the cool-down between cells
// and the cost of the experiment layer around them.
func TestSweepQuickstart(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	data, err := os.ReadFile("../../examples/quickstart.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), `"10.213.0.0/24"`, `"`+subnet+`"`, 1)
	m, err := manifest.Parse("quickstart.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultSweep()
	cfg.Connections, cfg.Rates, cfg.Repeats = []int{1, 2}, []float64{100, 200}, 1
	cfg.Duration = rundir.Duration{Duration: 5 * time.Second}
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	d, err := Create(testenv.OutputDir(t), m.Name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d.Index = NewIndex(m.Name, m.Seed, *cfg, time.Now())
	lv := &Live{Manifest: m, Log: testenv.LogWriter(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := (&Runner{Dir: d, Base: m.Load, Open: lv.Opener(d), Log: testenv.LogWriter(t)}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)

	x, err := rundir.SweepRecord.Read(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Complete || len(x.Cells) != 4 || len(x.Testnets) != 1 {
		t.Fatalf("complete %v, %d cells, testnets %v", x.Complete, len(x.Cells), x.Testnets)
	}
	seen := map[[2]float64]bool{}
	for _, c := range x.Cells {
		f := c.Figures
		if c.Status != rundir.CellDone || f == nil || c.Verdict == nil {
			t.Fatalf("cell %s: %s %s", c.ID, c.Status, c.Error)
		}
		seen[[2]float64{float64(c.Connections), c.Rate}] = true
		want := int(float64(c.Connections) * c.Rate * 5)
		if c.Expected != want || f.Sent != want {
			t.Errorf("cell %s: expected %d, sent %d, want %d both", c.ID, c.Expected, f.Sent, want)
		}
		if f.Sent != f.Committed+f.Rejected+f.Lost {
			t.Errorf("cell %s: sent %d != committed %d + rejected %d + lost %d", c.ID, f.Sent, f.Committed, f.Rejected, f.Lost)
		}
		// 400 tx/s is far below the quickstart's saturation. A cell the
		// hypervisor's steal bound is rightly invalid; the sweep's pacing,
		// what this test is about, is still checked (CI, 2026-11-29).
		if c.Verdict.State == judge.Invalid && analyze.OnlyStolen(c.Verdict.Reasons) {
			t.Logf("cell %s: bound by CPU steal, its verdict not checked: %v", c.ID, c.Verdict.Reasons)
		} else if f.Committed != f.Sent || c.Verdict.State != judge.OK || !f.LoadValid {
			t.Errorf("cell %s: committed %d of %d, %s %v %v", c.ID, f.Committed, f.Sent, c.Verdict.State, c.Verdict.Reasons, f.LoadInvalid)
		}
		if f.Offered != float64(c.Connections)*c.Rate || f.TPS <= 0 || f.P50Ms <= 0 || f.P99Ms < f.P50Ms {
			t.Errorf("cell %s: figures %+v", c.ID, f)
		}
		// Every cell is an ordinary run directory with its own results.
		var res struct {
			Accounting struct{ Sent int } `json:"accounting"`
		}
		cd, err := rundir.Open(filepath.Join(d.Path, c.RunDir))
		if err != nil {
			t.Fatal(err)
		}
		if err := cd.ReadJSON(rundir.ResultsFile, &res); err != nil || res.Accounting.Sent != f.Sent {
			t.Errorf("cell %s: results.json sent %d (%v), sweep.json %d", c.ID, res.Accounting.Sent, err, f.Sent)
		}
		if c.Order > 1 {
			if c.CooldownSec <= 0 {
				t.Errorf("cell %s: no cool-down before it", c.ID)
			}
			if c.OverheadSec > 10 {
				t.Errorf("cell %s: %.1f s between cells beyond the cool-down", c.ID, c.OverheadSec)
			}
		}
		t.Logf("cell %s: wall %.1f s (load 5 s), cool-down %.1f s, gap beyond it %.3f s, TPS %.1f, p50 %.0f ms",
			c.ID, c.WallSec, c.CooldownSec, c.OverheadSec, f.TPS, f.P50Ms)
	}
	if len(seen) != 4 {
		t.Errorf("cells cover %d grid points, want 4", len(seen))
	}
	if g := x.Grid; g == nil || g.Chosen == nil || g.Chosen.Connections != 2 || g.Chosen.Rate != 200 {
		t.Errorf("saturation point %+v, want the heaviest cell (2 x 200)", x.Grid.Chosen)
	}
	if _, err := report.RenderSweep(d.Path); err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep of 4 cells x 5 s: %s wall", wall.Round(100*time.Millisecond))
}
