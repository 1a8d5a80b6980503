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
	// Inner, when set, makes the bootstrap two-stage: the N units are runs,
	// Inner[r] the blocks of run r. A resample draws runs, then blocks
	// within each drawn run, and the side's value is the mean of the runs'
	// statistics (Stat is not used). Two runs that agree by chance then
	// still carry the noise of their blocks: with few runs, the run-to-run
	// spread alone understates it (an A/A pair of 2 runs each came out a
	// "regression" of 13 % on this machine before this).
	Inner []Units
}

// NestedUnits is a side of runs, each given by its blocks.
func NestedUnits(runs []Units) Units { return Units{N: len(runs), Inner: runs} }

// Observed is the side's statistic on the sample as observed.
func (u Units) Observed() float64 {
	if u.Inner == nil {
		return u.Stat(identity(u.N))
	}
	var s float64
	for _, in := range u.Inner {
		s += in.Stat(identity(in.N))
	}
	return s / float64(len(u.Inner))
}

// effN is the number of units that set the interval's width: the runs, or
// for a single run given by its blocks, its blocks.
func (u Units) effN() int {
	if u.Inner != nil && u.N == 1 {
		return u.Inner[0].N
	}
	return u.N
}

// resample draws one bootstrap replicate of the side's statistic.
func (u Units) resample(rng *rand.Rand, idx []int) float64 {
	for i := range idx {
		idx[i] = rng.IntN(u.N)
	}
	if u.Inner == nil {
		return u.Stat(idx)
	}
	var s float64
	for _, r := range idx {
		in := u.Inner[r]
		inner := make([]int, in.N)
		for i := range inner {
			inner[i] = rng.IntN(in.N)
		}
		s += in.Stat(inner)
	}
	return s / float64(len(idx))
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
	b0, v0 := base.Observed(), variant.Observed()
	delta = pctChange(b0, v0)
	if base.effN() < 2 || variant.effN() < 2 || math.IsNaN(delta) || math.IsInf(delta, 0) {
		return delta, math.NaN(), math.NaN(), false
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ib, iv := make([]int, base.N), make([]int, variant.N)
	ds := make([]float64, 0, resamples)
	for r := 0; r < resamples; r++ {
		d := pctChange(base.resample(rng, ib), variant.resample(rng, iv))
		if !math.IsNaN(d) && !math.IsInf(d, 0) {
			ds = append(ds, d)
		}
	}
	if len(ds) < resamples/2 {
		return delta, math.NaN(), math.NaN(), false
	}
	sort.Float64s(ds)
	n := float64(min(base.effN(), variant.effN()))
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
