package judge

import (
	"strings"
	"testing"
)

// The QA layout: c in {1, 2, 4}, r in {100, 200, 400, 800}. The chain keeps
// up to ~800 tx/s offered; past it, committed falls below 99 % of sent.
func qaGrid(repeat int) []Cell {
	var cells []Cell
	for rep := 0; rep < repeat; rep++ {
		for _, c := range []int{1, 2, 4} {
			for _, r := range []float64{100, 200, 400, 800} {
				off := float64(c) * r
				sent := int(off * 30)
				committed := sent
				p50 := 700.0 + float64(rep)*10
				if off > 800 {
					committed = int(float64(sent) * 800 / off)
					p50 = 4000
				}
				x := cell(c, r, sent, committed, p50)
				x.TPS = float64(committed)/30 + float64(rep) // spread over repeats
				cells = append(cells, x)
			}
		}
	}
	return cells
}

func TestJudgeGrid(t *testing.T) {
	g := DefaultRule().JudgeGrid(qaGrid(3))
	if len(g.Points) != 12 {
		t.Fatalf("%d points, want 12", len(g.Points))
	}
	wantSust := map[int]float64{1: 800, 2: 400, 4: 200}
	for _, l := range g.Lines {
		if l.Sustainable != wantSust[l.Connections] {
			t.Errorf("c=%d: sustainable %g, want %g", l.Connections, l.Sustainable, wantSust[l.Connections])
		}
	}
	if g.Chosen == nil {
		t.Fatal("no chosen point")
	}
	// 1x800, 2x400 and 4x200 all offer 800 tx/s: the fewest connections win.
	if g.Chosen.Connections != 1 || g.Chosen.Rate != 800 {
		t.Errorf("chosen c=%d r=%g, want 1 x 800", g.Chosen.Connections, g.Chosen.Rate)
	}
	if g.Chosen.TPS.N != 3 || g.Chosen.TPS.Min != 800 || g.Chosen.TPS.Max != 802 {
		t.Errorf("chosen spread %+v, want 3 repeats 800..802", g.Chosen.TPS)
	}
	if d := g.Describe(); !strings.Contains(d, "c=1 x r=800") || !strings.Contains(d, "3 repeats") || !strings.Contains(d, "no rate failed at c=1") {
		t.Errorf("describe: %q", d)
	}
	if g.BaselineP50Ms != 710 {
		t.Errorf("baseline %g, want 710 (median of 700, 710, 720)", g.BaselineP50Ms)
	}
}

func TestJudgeGridStopsAtFirstFailure(t *testing.T) {
	// c=1: 100 ok, 200 invalid (generator lagged), 400 ok again. The walk
	// stops at 200: nothing is known to be sustainable past an invalid cell.
	ok1 := cell(1, 100, 3000, 3000, 700)
	inv := cell(1, 200, 6000, 6000, 700)
	inv.LoadValid = false
	ok3 := cell(1, 400, 12000, 12000, 700)
	// c=2: one of two repeats saturated at 100: at least half -> saturated.
	s1 := cell(2, 100, 6000, 6000, 700)
	s2 := cell(2, 100, 6000, 5000, 700)
	g := DefaultRule().JudgeGrid([]Cell{ok3, inv, ok1, s1, s2})
	if g.Lines[0].Sustainable != 100 || g.Lines[0].StoppedAt != 200 || g.Lines[0].StoppedState != Invalid {
		t.Errorf("c=1 line %+v, want sustainable 100, stopped at 200 (invalid)", g.Lines[0])
	}
	if g.Lines[1].Sustainable != 0 || g.Lines[1].StoppedState != Saturated {
		t.Errorf("c=2 line %+v, want nothing sustainable", g.Lines[1])
	}
	if g.Chosen == nil || g.Chosen.Rate != 100 || g.Chosen.Connections != 1 {
		t.Errorf("chosen %+v, want 1 x 100", g.Chosen)
	}
	none := DefaultRule().JudgeGrid([]Cell{s2})
	if none.Chosen != nil || !strings.Contains(none.Describe(), "no sustainable point") {
		t.Errorf("all saturated: chosen %+v", none.Chosen)
	}
}

// TestJudgeGridNothingFailed: a grid whose every rate was sustained has not
// found the saturation point, only a bound below it, and says so.
func TestJudgeGridNothingFailed(t *testing.T) {
	g := DefaultRule().JudgeGrid([]Cell{cell(2, 100, 6000, 6000, 700), cell(2, 200, 12000, 12000, 700)})
	d := g.Describe()
	if g.Chosen == nil || g.Chosen.Rate != 200 || !strings.Contains(d, "no rate failed at c=2, so saturation lies at or above it") {
		t.Errorf("chosen %+v, describe %q", g.Chosen, d)
	}
}
