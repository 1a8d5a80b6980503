package judge

import (
	"math"
	"testing"
)

func TestBetweenQAs(t *testing.T) {
	cases := []struct {
		name  string
		means []QAMean
		s2    float64
		df    int
		found bool
		p     float64 // 0: not checked
	}{
		// The two A/A default QAs of 2026-11-29: pairs +0.040, +0.105,
		// +0.079 and +0.130, +0.127, -0.051 (pooled s^2 0.00596, 4 df).
		{"two QAs within their noise", []QAMean{{0.0747, 3}, {0.0687, 3}}, 0.00596, 4, false, 0.19},
		// Six QAs of 3 pairs, every mean 0.15 off where the pairs'
		// noise gives a mean's spread of 0.045.
		{"six QAs far apart", []QAMean{{0.15, 3}, {-0.15, 3}, {0.15, 3}, {-0.15, 3}, {0.15, 3}, {-0.15, 3}}, 0.006, 12, true, 0},
		{"means at zero", []QAMean{{0, 3}, {0, 4}}, 0.006, 5, false, 1},
		{"one QA", []QAMean{{0.3, 3}}, 0.006, 2, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := BetweenQAs(c.means, c.s2, c.df)
			if b.Found() != c.found {
				t.Fatalf("found %v, want %v (%+v)", b.Found(), c.found, b)
			}
			if c.p > 0 && math.Abs(b.P-c.p) > 0.01 {
				t.Errorf("p = %.3f, want %.2f (%+v)", b.P, c.p, b)
			}
			if b.Found() && !(b.SD > 0.1 && b.SD < 0.16) {
				t.Errorf("tau %.4f, want about sqrt(0.15^2 - 0.006/3) = 0.143", b.SD)
			}
		})
	}
}
