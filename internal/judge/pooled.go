package judge

import (
	"math"
	"slices"
)

// Pooled holds every unit's values sorted once, each with its unit, so a
// resample's percentile needs no re-sorting: it weighs each unit by how
// often it was drawn, and the nearest-rank percentile is where the
// cumulative weight reaches the rank.
type Pooled struct {
	vals  []float64
	unit  []int
	count []int // values per unit
}

// NewPooled pools lists, one per unit.
func NewPooled(lists [][]float64) *Pooled {
	type valOf struct {
		v    float64
		unit int
	}
	var all []valOf
	p := &Pooled{count: make([]int, len(lists))}
	for u, l := range lists {
		p.count[u] = len(l)
		for _, v := range l {
			all = append(all, valOf{v, u})
		}
	}
	// A stable sort keeps equal values in unit order, so the pooled
	// order, and every percentile drawn from it, is reproducible.
	slices.SortStableFunc(all, func(a, b valOf) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	p.vals, p.unit = make([]float64, len(all)), make([]int, len(all))
	for i, a := range all {
		p.vals[i], p.unit[i] = a.v, a.unit
	}
	return p
}

// Pct is the statistic "nearest-rank percentile q of the drawn units' values".
func (p *Pooled) Pct(q float64) func(idx []int) float64 {
	return func(idx []int) float64 {
		w := make([]int, len(p.count))
		total := 0
		for _, i := range idx {
			w[i]++
			total += p.count[i]
		}
		if total == 0 {
			return math.NaN()
		}
		rank := max(1, int(math.Ceil(q/100*float64(total)-1e-9)))
		if 2*rank > total {
			// A high percentile is nearer the top: walk down from it to the
			// same value, the lowest whose cumulative weight reaches rank.
			cum := total // the weight of vals[0..k]
			for k := len(p.unit) - 1; k >= 0; k-- {
				below := cum - w[p.unit[k]]
				if below < rank {
					return p.vals[k]
				}
				cum = below
			}
		}
		cum := 0
		for k, u := range p.unit {
			if cum += w[u]; cum >= rank {
				return p.vals[k]
			}
		}
		return p.vals[len(p.vals)-1]
	}
}
