package analyze

import (
	"math"
	"sort"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Percentile returns the p-th percentile (0 < p <= 100) of sorted values by
// the nearest-rank method: the smallest value such that at least p % of the
// values are <= it, i.e. sorted[ceil(p/100·N) − 1]. It is always one of the
// observed values (no interpolation), so a p99 is a latency some tx really
// had. NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	// The epsilon keeps 0.95·20 = 19.000000000000004 from ranking as 20.
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// Summarize computes a Stats of values (any order). Std is the sample
// standard deviation (divisor N−1, 0 for one value), as gonum's stat.StdDev
// that CometBFT's loadtime report uses. No values give the zero Stats (N=0),
// never NaN, so results.json stays valid JSON.
func Summarize(values []float64) rundir.Stats {
	n := len(values)
	if n == 0 {
		return rundir.Stats{}
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	std := 0.0
	if n > 1 {
		std = math.Sqrt(ss / float64(n-1))
	}
	return rundir.Stats{
		N: n, Avg: Round3(mean), Std: Round3(std), Min: Round3(s[0]),
		P50: Round3(Percentile(s, 50)), P95: Round3(Percentile(s, 95)), P99: Round3(Percentile(s, 99)),
		Max: Round3(s[n-1]),
	}
}

// Round3 keeps three decimals: microseconds for values in milliseconds.
func Round3(v float64) float64 { return math.Round(v*1000) / 1000 }
