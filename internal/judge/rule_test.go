package judge

import (
	"strings"
	"testing"
)

func cell(c int, r float64, sent, committed int, p50 float64) Cell {
	return Cell{Connections: c, Rate: r, Offered: float64(c) * r, Sent: sent, Committed: committed,
		Lost: sent - committed, TPS: float64(committed) / 30, P50Ms: p50, P99Ms: 2 * p50, LoadValid: true}
}

func TestJudge(t *testing.T) {
	rule := DefaultRule()
	lagged := cell(4, 800, 90000, 90000, 700)
	lagged.LoadValid = false
	lagged.LoadInvalid = []string{"load validator00/0: p99 send lag 54.0 ms > 5 ms"}
	tests := []struct {
		name    string
		c       Cell
		base    float64
		want    State
		reasons []string // substrings, in order
	}{
		{"all committed, fast", cell(1, 100, 3000, 3000, 700), 700, OK, nil},
		{"exactly 99 %", cell(1, 100, 1000, 990, 700), 700, OK, nil},
		{"just under 99 %", cell(1, 100, 1000, 989, 700), 700, Saturated, []string{"committed 989 of 1000 sent (98.9 % < 99 %)"}},
		{"latency at k x base is still ok", cell(2, 400, 1000, 1000, 2100), 700, OK, nil},
		{"latency over k x base", cell(2, 400, 1000, 1000, 2101), 700, Saturated, []string{"p50 latency 2101 ms > 3 x 700 ms"}},
		{"both criteria", cell(2, 800, 1000, 500, 5000), 700, Saturated, []string{"committed 500 of 1000", "p50 latency 5000 ms"}},
		{"no baseline: latency not judged", cell(2, 800, 1000, 1000, 5000), 0, OK, nil},
		// The generator lagged: whatever the chain did, the cell is invalid,
		// not saturated, and says why.
		{"generator lagged", lagged, 700, Invalid, []string{"missed its schedule", "p99 send lag 54.0 ms"}},
		{"nothing sent", cell(1, 100, 0, 0, 0), 700, Invalid, []string{"nothing was sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := rule.Judge(tt.c, tt.base)
			if v.State != tt.want {
				t.Fatalf("state %s, want %s (reasons %q)", v.State, tt.want, v.Reasons)
			}
			if len(v.Reasons) != len(tt.reasons) && tt.want != Invalid {
				t.Fatalf("reasons %q, want %d matching %q", v.Reasons, len(tt.reasons), tt.reasons)
			}
			all := strings.Join(v.Reasons, " | ")
			for _, s := range tt.reasons {
				if !strings.Contains(all, s) {
					t.Errorf("reasons %q lack %q", all, s)
				}
			}
		})
	}
}

func TestBaselineP50(t *testing.T) {
	lightLagged := cell(1, 50, 1000, 1000, 100)
	lightLagged.LoadValid = false
	cells := []Cell{
		cell(2, 200, 1000, 1000, 900),
		lightLagged, // lighter, but invalid: not the baseline
		cell(1, 100, 1000, 1000, 800),
		cell(1, 100, 1000, 1000, 600),
		cell(1, 100, 1000, 1000, 700),
		cell(1, 100, 1000, 1000, 750),
	}
	if got := BaselineP50(cells); got != 725 {
		t.Errorf("baseline %g, want 725 (median of the four 1x100 repeats)", got)
	}
	if got := BaselineP50(nil); got != 0 {
		t.Errorf("baseline of nothing %g, want 0", got)
	}
}

func TestRuleValidate(t *testing.T) {
	if errs := DefaultRule().Validate(); len(errs) != 0 {
		t.Errorf("default rule: %v", errs)
	}
	errs := Rule{MinCommitted: 1.5, LatencyFactor: 0.5}.Validate()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "min_committed") || !strings.Contains(errs[1].Error(), "latency_factor") {
		t.Errorf("errors %v, want one per field", errs)
	}
	if s := DefaultRule().String(); !strings.Contains(s, "99 %") || !strings.Contains(s, "3 x") || !strings.Contains(s, "invalid") {
		t.Errorf("rule text %q does not state the rule", s)
	}
}

func TestSpreadOf(t *testing.T) {
	s := SpreadOf([]float64{10, 12, 14})
	if s.N != 3 || s.Mean != 12 || s.SD != 2 || s.Min != 10 || s.Max != 14 {
		t.Fatalf("spread %+v", s)
	}
	// t(0.975, 2) = 4.303: half-width 4.303 * 2 / sqrt(3) = 4.9687.
	if d := s.Hi - 12 - 4.9687; d > 1e-3 || d < -1e-3 {
		t.Errorf("ci %g..%g, want 12 +- 4.9687", s.Lo, s.Hi)
	}
	if one := SpreadOf([]float64{5}); one.Lo != 5 || one.Hi != 5 || one.SD != 0 {
		t.Errorf("one value: %+v", one)
	}
}
