package judge

import "math"

// Spread summarises repeated measurements of one quantity.
type Spread struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"` // sample standard deviation (N-1); 0 for one value
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// Lo and Hi bound a 95 % confidence interval of the mean (Student t);
	// equal to Mean for one value, where no interval can be computed.
	Lo float64 `json:"ci95_lo"`
	Hi float64 `json:"ci95_hi"`
}

// SpreadOf computes the spread of xs (the zero Spread for none).
func SpreadOf(xs []float64) Spread {
	n := len(xs)
	if n == 0 {
		return Spread{}
	}
	s := Spread{N: n, Min: xs[0], Max: xs[0]}
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(n-1))
	}
	half := 0.0
	if n > 1 {
		half = tQuantile975(n-1) * s.SD / math.Sqrt(float64(n))
	}
	s.Lo, s.Hi = s.Mean-half, s.Mean+half
	return s
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom: the two-sided 95 % critical value.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return math.Inf(1)
	case df < len(table):
		return table[df]
	case df < 60:
		return 2.000
	case df < 120:
		return 1.980
	default:
		return 1.960
	}
}

// quantile of sorted values by linear interpolation (q in [0,1]).
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	if i >= n-1 {
		return sorted[n-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}
