package judge

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Units is one side of a comparison as the bootstrap sees it: N resampling
// units (runs, or blocks of one run) and the statistic computed from a
// multiset of them, given as indices into the units (repeats allowed).
type Units struct {
	N    int
	Stat func(idx []int) float64
}

// RunUnits is a side whose units are whole runs, one value each; its
// statistic is the mean.
func RunUnits(values []float64) Units {
	return Units{N: len(values), Stat: func(idx []int) float64 {
		var s float64
		for _, i := range idx {
			s += values[i]
		}
		return s / float64(len(idx))
	}}
}

// identity is 0..n-1: the sample as observed.
func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// DefaultResamples is the number of bootstrap resamples: the 2.5th and
// 97.5th percentiles of 4000 resamples move by well under 1 % of the
// interval's width from one seed to another.
const DefaultResamples = 4000

// DeltaCI is the percent change of variant over base, (v-b)/|b|·100, and a
// two-sided 95 % bootstrap interval of it. Both sides are resampled
// independently (units with replacement), seeded, so the same samples and
// seed give the same interval bit for bit.
//
// The percentile interval of a bootstrap is too narrow for few units (its
// variance is (n-1)/n of the true one); the deviations from the observed
// delta are widened by sqrt(n/(n-1)), n the smaller side (the "expanded
// percentile" bootstrap, Hesterberg 2015). ok is false when no interval can
// be formed: a side with fewer than 2 units or a base of 0.
func DeltaCI(base, variant Units, resamples int, seed uint64) (delta, lo, hi float64, ok bool) {
	if base.N == 0 || variant.N == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	b0, v0 := base.Stat(identity(base.N)), variant.Stat(identity(variant.N))
	delta = pctChange(b0, v0)
	if base.N < 2 || variant.N < 2 || math.IsNaN(delta) || math.IsInf(delta, 0) {
		return delta, math.NaN(), math.NaN(), false
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ib, iv := make([]int, base.N), make([]int, variant.N)
	ds := make([]float64, 0, resamples)
	for r := 0; r < resamples; r++ {
		for i := range ib {
			ib[i] = rng.IntN(base.N)
		}
		for i := range iv {
			iv[i] = rng.IntN(variant.N)
		}
		d := pctChange(base.Stat(ib), variant.Stat(iv))
		if !math.IsNaN(d) && !math.IsInf(d, 0) {
			ds = append(ds, d)
		}
	}
	if len(ds) < resamples/2 {
		return delta, math.NaN(), math.NaN(), false
	}
	sort.Float64s(ds)
	n := float64(min(base.N, variant.N))
	widen := math.Sqrt(n / (n - 1))
	lo = delta + (pctAt(ds, 0.025)-delta)*widen
	hi = delta + (pctAt(ds, 0.975)-delta)*widen
	return delta, lo, hi, true
}

func pctChange(b, v float64) float64 {
	if b == 0 {
		if v == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return (v - b) / math.Abs(b) * 100
}

// pctAt is the q-quantile of sorted by linear interpolation.
func pctAt(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}
