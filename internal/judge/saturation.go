package judge

import (
	"fmt"
	"math"
)

// SaturationInterval is where a search places a build's saturation rate
// (tx/s per connection): at or above Low (sustainable) and below High
// (saturated). Low 0: nothing was sustainable; High +Inf: nothing saturated.
type SaturationInterval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// IntervalOf is the interval a search's state supports, whatever its
// outcome (a search stopped by its budget still brackets the point); false
// when it brackets nothing (no probe decided).
func IntervalOf(st SearchState) (SaturationInterval, bool) {
	iv := SaturationInterval{Low: st.Low, High: st.High}
	if iv.High == 0 {
		iv.High = math.Inf(1)
	}
	if iv.Low == 0 && math.IsInf(iv.High, 1) {
		return iv, false
	}
	if iv.Low >= iv.High { // not monotone: no interval
		return iv, false
	}
	return iv, true
}

// String is "[low, high)".
func (iv SaturationInterval) String() string {
	hi := "inf"
	if !math.IsInf(iv.High, 1) {
		hi = fmt.Sprintf("%g", iv.High)
	}
	return fmt.Sprintf("[%g, %s)", iv.Low, hi)
}

// SaturationVerdict compares a candidate's saturation rate with a
// baseline's.
type SaturationVerdict struct {
	Outcome   Outcome            `json:"outcome"`
	Base      SaturationInterval `json:"base"`
	Candidate SaturationInterval `json:"candidate"`
	Margin    float64            `json:"margin"`
	// MinChange and MaxChange bound the candidate's change relative to the
	// baseline over every pair of points in the two intervals (-0.1: 10 %
	// lower); +-Inf when an interval is open.
	MinChange float64 `json:"min_change"`
	MaxChange float64 `json:"max_change"`
	Rule      string  `json:"rule"`
	Why       string  `json:"why"`
}

// SaturationRule states CompareSaturation's rule for a margin.
func SaturationRule(margin float64) string {
	m := pct(margin)
	return fmt.Sprintf("each build's saturation rate lies in its search's interval [highest sustainable, lowest saturated); "+
		"regression when the candidate's lowest saturated rate <= the baseline's highest sustainable x (1 - %s) (lower by more than %s wherever the points lie); "+
		"improvement when the candidate's highest sustainable >= the baseline's lowest saturated x (1 + %s); "+
		"same when every pair of points in the two intervals differs by at most %s; otherwise inconclusive (the intervals are too wide to tell)", m, m, m, m)
}

// CompareSaturation judges a candidate's saturation interval against the
// baseline's by the rule SaturationRule(margin) states: a verdict holds
// for every pair of points the two intervals allow, so it never depends
// on where in its interval a point lies. margin is a fraction (0.05 = 5 %).
func CompareSaturation(base, cand SaturationInterval, margin float64) SaturationVerdict {
	v := SaturationVerdict{Base: base, Candidate: cand, Margin: margin, Rule: SaturationRule(margin)}
	// The candidate's point c in [cand.Low, cand.High), the baseline's b in
	// [base.Low, base.High): c/b - 1 ranges over (MinChange, MaxChange).
	v.MinChange = ratio(cand.Low, base.High) - 1
	v.MaxChange = ratio(cand.High, base.Low) - 1
	span := fmt.Sprintf("the candidate %s vs the baseline %s: a change of %s to %s", cand, base, signedPct(v.MinChange), signedPct(v.MaxChange))
	switch {
	case !(margin >= 0 && margin < 1):
		v.Outcome, v.Why = OutcomeInconclusive, fmt.Sprintf("margin %g: want a fraction in [0, 1)", margin)
	case !valid(base) || !valid(cand):
		v.Outcome, v.Why = OutcomeInconclusive, fmt.Sprintf("no interval to compare: baseline %s, candidate %s", base, cand)
	case cand.High <= base.Low*(1-margin):
		v.Outcome, v.Why = OutcomeRegression, span+fmt.Sprintf(", lower by more than %s", pct(margin))
	case cand.Low >= base.High*(1+margin):
		v.Outcome, v.Why = OutcomeImprovement, span+fmt.Sprintf(", higher by more than %s", pct(margin))
	case v.MinChange >= -margin && v.MaxChange <= margin:
		v.Outcome, v.Why = OutcomeSame, span+fmt.Sprintf(", within %s", pct(margin))
	default:
		v.Outcome, v.Why = OutcomeInconclusive, span+fmt.Sprintf(": the intervals allow both a change within %s and beyond it", pct(margin))
	}
	return v
}

func valid(iv SaturationInterval) bool {
	return iv.Low >= 0 && iv.High > iv.Low && !math.IsNaN(iv.Low) && !math.IsNaN(iv.High) && !(iv.Low == 0 && math.IsInf(iv.High, 1))
}

// ratio is a/b with the open ends: x/0 = +Inf, Inf/y = +Inf.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsInf(a, 1) {
		return math.Inf(1)
	}
	if math.IsInf(b, 1) {
		return 0
	}
	return a / b
}

func signedPct(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return fmt.Sprintf("%+.1f %%", f*100)
}
