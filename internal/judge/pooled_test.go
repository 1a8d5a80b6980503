package judge

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Pct is the nearest-rank percentile of the values of the drawn units, each
// unit counted as often as it was drawn: checked against expanding the
// draw into one sorted list, for low and high percentiles (walked from
// either end), ties across units and units without values.
func TestPooledPct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		units := 1 + rng.IntN(12)
		lists := make([][]float64, units)
		for u := range lists {
			for range rng.IntN(6) { // some units have none
				lists[u] = append(lists[u], float64(rng.IntN(20))) // ties
			}
			slices.Sort(lists[u])
		}
		p := NewPooled(lists)
		idx := make([]int, units)
		for i := range idx {
			idx[i] = rng.IntN(units)
		}
		var drawn []float64
		for _, u := range idx {
			drawn = append(drawn, lists[u]...)
		}
		slices.Sort(drawn)
		for _, q := range []float64{1, 25, 50, 50.5, 75, 95, 99, 100} {
			got := p.Pct(q)(idx)
			if len(drawn) == 0 {
				if got == got { // not NaN
					t.Fatalf("trial %d q %g: %v for a draw without values, want NaN", trial, q, got)
				}
				continue
			}
			if want := nearestRank(drawn, q); got != want {
				t.Fatalf("trial %d q %g: %v, want %v (draw %v of %v)", trial, q, got, want, idx, lists)
			}
		}
	}
}

// nearestRank is the textbook definition on one sorted list.
func nearestRank(sorted []float64, q float64) float64 {
	n := len(sorted)
	for k := 1; k <= n; k++ {
		if float64(k) >= q/100*float64(n)-1e-9 {
			return sorted[k-1]
		}
	}
	return sorted[n-1]
}
