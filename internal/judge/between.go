package judge

import "math"

// BetweenAlpha is the level of the test that decides whether A/A QAs show
// a between-QA offset at all (BetweenQAs).
const BetweenAlpha = 0.05

// QAMean is one A/A QA's mean ln(candidate/baseline) over its N pairs.
type QAMean struct {
	Mean float64
	N    int
}

// Between is the between-QA spread of A/A QAs' means, and the test behind
// it.
type Between struct {
	// SD is tau, the spread of a QA's mean beyond its pairs' own: the
	// method of moments around the true 0 (the mean over the QAs of
	// m_i^2 - s^2/n_i), 0 when that is negative or the test does not find
	// an offset.
	SD float64
	// Estimate is tau before the test (what SD would be without it).
	Estimate float64
	// QAs tested; F and P the test: F = sum(n_i m_i^2 / s^2) / k, an
	// F(k, df) variate when the QAs share no offset (each mean is 0 up to
	// its pairs' noise, s^2 estimated with df degrees of freedom).
	QAs  int
	F, P float64
	DF   int
}

// Found reports whether the QAs showed an offset (P < BetweenAlpha).
func (b Between) Found() bool { return b.SD > 0 }

// BetweenQAs estimates the between-QA spread from A/A QAs' means, their
// pairs' pooled variance s2 of one pair's log ratio and its degrees of
// freedom. The spread is kept only when the means are farther from 0
// than their pairs' noise explains, at BetweenAlpha: an estimate from two
// or three QAs is so uncertain (a t with 2 df multiplies it by 4.3) that,
// added to every interval whenever positive, it made the third A/A
// default QA of a machine undecidable at any number of pairs (2026-11-29,
// tau 0.056 from two QAs whose means, +0.075 and +0.069 over 3 pairs each,
// were within their pairs' noise: F = 2.6 on (2, 4) df, p = 0.19). With
// no offset the test adds it in 5 % of the records; with one, it is found
// as the A/A QAs accumulate (TestOperatingCharacteristicEstimatedBetween).
func BetweenQAs(means []QAMean, s2 float64, df int) Between {
	b := Between{QAs: len(means), DF: df, P: 1}
	if len(means) < 2 || !(s2 > 0) || df < 1 {
		return b
	}
	var tau2, q float64
	for _, m := range means {
		tau2 += m.Mean*m.Mean - s2/float64(m.N)
		q += float64(m.N) * m.Mean * m.Mean / s2
	}
	tau2 /= float64(len(means))
	k := float64(len(means))
	b.F = q / k
	b.P = 1 - FCDF(b.F, k, float64(df))
	if tau2 > 0 {
		b.Estimate = math.Sqrt(tau2)
	}
	if b.P < BetweenAlpha {
		b.SD = b.Estimate
	}
	return b
}
