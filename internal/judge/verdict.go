package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Better says which way a metric improves.
type Better int

const (
	HigherIsBetter Better = iota + 1
	LowerIsBetter
)

// Metric is one quantity a comparison judges. Its direction is declared
// here, once, for every report and verdict.
type Metric struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better Better `json:"-"`
}

// Outcome is the judgement of one metric of one variant against the base.
type Outcome string

const (
	OutcomeRegression   Outcome = "regression"
	OutcomeImprovement  Outcome = "improvement"
	OutcomeSame         Outcome = "same"
	OutcomeInconclusive Outcome = "inconclusive"
)

// DefaultThreshold is the regression rule of the CometBFT QA reports: a
// change of more than 10 % is a regression.
const DefaultThreshold = 10.0

// RegressionRule decides verdicts. With w the change in the metric's worse direction
// (+ = worse) and [lo, hi] its 95 % interval (also oriented worse-positive):
//
//	regression    lo > T           (worse by more than T, and the interval excludes T)
//	improvement   hi < -T          (better by more than T, likewise)
//	same          -T < lo, hi < T  (the interval excludes both thresholds)
//	inconclusive  otherwise        (the interval straddles T or -T, or none exists)
//
// An A/A pair has w near 0, so it comes out "same" or, when noise is large,
// "inconclusive", but a regression only when the noise puts the whole
// interval past T: that is the false-positive rate measured in the notes.
type RegressionRule struct {
	// Threshold T in percent (default 10).
	Threshold float64
	// Resamples of the bootstrap (default DefaultResamples).
	Resamples int
	// Seed makes every interval reproducible.
	Seed uint64
	// MinRuns: a verdict from run values alone (no blocks inside them to
	// carry their noise) needs this many runs per side, else it is
	// inconclusive: two runs that agree by chance make a narrow interval.
	MinRuns int
	// NonInferiority asks only "worse by more than T?": an interval
	// wholly below +T (worse-positive) is "same" (not worse by more than
	// T) even where it reaches past -T, so an unchanged build is not held
	// inconclusive by how much better it might be.
	NonInferiority bool
}

// Judgement is one metric of one variant against the base.
type Judgement struct {
	Metric  string  `json:"metric"`
	Base    float64 `json:"base"`
	Variant float64 `json:"variant"`
	// DeltaPct is (variant-base)/|base|·100 as measured; CILo/CIHi its
	// 95 % interval (NaN-free in JSON: omitted when none).
	DeltaPct float64  `json:"delta_pct"`
	CILo     *float64 `json:"ci95_lo_pct,omitempty"`
	CIHi     *float64 `json:"ci95_hi_pct,omitempty"`
	Verdict  Outcome  `json:"verdict"`
	// Basis is what was resampled: "runs" or "blocks".
	Basis    string `json:"basis"`
	NBase    int    `json:"n_base"`
	NVariant int    `json:"n_variant"`
	// RepeatsNeeded estimates, for an inconclusive verdict, how many units
	// per side would shrink the interval off the threshold it straddles
	// (its width ∝ 1/√n); 0 when not applicable, -1 when no number of
	// repeats can (the delta sits on the threshold).
	RepeatsNeeded int    `json:"repeats_needed,omitempty"`
	Reason        string `json:"reason"`
}

// Compare compares one metric of a variant to the base with r's rule.
func (r RegressionRule) Compare(m Metric, basis string, base, variant Units) Judgement {
	t := r.threshold()
	seed := r.Seed ^ hashKey(m.Key)
	d, lo, hi, ok := DeltaCI(base, variant, r.Resamples, seed)
	j := Judgement{Metric: m.Key, DeltaPct: round6(d), Basis: basis, NBase: base.N, NVariant: variant.N}
	if base.N > 0 {
		j.Base = round6(base.Observed())
	}
	if variant.N > 0 {
		j.Variant = round6(variant.Observed())
	}
	if math.IsNaN(d) || math.IsInf(d, 0) {
		j.DeltaPct = 0
		j.Verdict = OutcomeInconclusive
		j.Reason = "no value to compare (missing, or a base of 0)"
		return j
	}
	if !ok {
		j.Verdict = OutcomeInconclusive
		j.RepeatsNeeded = max(2, r.MinRuns)
		j.Reason = fmt.Sprintf("one %s per side: no interval (noise unknown)", strings.TrimSuffix(basis, "s"))
		return j
	}
	lo, hi = round6(lo), round6(hi)
	j.CILo, j.CIHi = &lo, &hi
	if n := min(base.N, variant.N); base.Inner == nil && variant.Inner == nil && n < r.MinRuns {
		j.Verdict = OutcomeInconclusive
		j.RepeatsNeeded = r.MinRuns
		j.Reason = fmt.Sprintf("%d runs per side, and no blocks inside them: too few to know the run-to-run noise (need %d)", n, r.MinRuns)
		return j
	}
	// Orient worse-positive.
	w, wlo, whi := d, lo, hi
	if m.Better == HigherIsBetter {
		w, wlo, whi = -d, -hi, -lo
	}
	switch {
	case wlo > t:
		j.Verdict = OutcomeRegression
		j.Reason = fmt.Sprintf("worse by %.1f%%, interval excludes %.0f%%", math.Abs(d), t)
	case whi < -t:
		j.Verdict = OutcomeImprovement
		j.Reason = fmt.Sprintf("better by %.1f%%, interval excludes %.0f%%", math.Abs(d), t)
	case wlo > -t && whi < t:
		j.Verdict = OutcomeSame
		j.Reason = fmt.Sprintf("interval within ±%.0f%%", t)
	case r.NonInferiority && whi < t:
		j.Verdict = OutcomeSame
		j.Reason = fmt.Sprintf("not worse by more than %.0f%% (interval below it on the worse side)", t)
	default:
		j.Verdict = OutcomeInconclusive
		// The threshold the interval straddles nearest to the estimate
		// (only +T counts for non-inferiority).
		edge := t
		if !r.NonInferiority && math.Abs(w+t) < math.Abs(w-t) {
			edge = -t
		}
		j.RepeatsNeeded = repeatsNeeded(min(base.N, variant.N), w, wlo, whi, edge)
		shown := edge // in the delta's own sign, as the table prints it
		if m.Better == HigherIsBetter {
			shown = -edge
		}
		j.Reason = fmt.Sprintf("interval straddles %+.0f%%", shown)
	}
	return j
}

// repeatsNeeded: the half-width on the side facing edge shrinks as 1/√n;
// the interval clears edge when it is below |w-edge|.
func repeatsNeeded(n int, w, lo, hi, edge float64) int {
	dist := math.Abs(w - edge)
	half := hi - w
	if edge < w {
		half = w - lo
	}
	if dist < 1e-9 {
		return -1
	}
	k := float64(n) * (half / dist) * (half / dist)
	if k > 1000 {
		return -1
	}
	return max(n+1, int(math.Ceil(k)))
}

func (r RegressionRule) threshold() float64 {
	if r.Threshold <= 0 {
		return DefaultThreshold
	}
	return r.Threshold
}

// hashKey gives each metric its own bootstrap stream (FNV-1a).
func hashKey(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// round6 keeps JSON stable across platforms' last-bit differences.
func round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// ExitCode is ExitRegression when any judgement of a metric in failOn
// (every metric when failOn is empty) is a regression, else 0. Asked for
// equivalence, a difference either way fails (ExitRegression: not
// equivalent) and an undecided metric leaves it ExitInconclusive.
func ExitCode(js []Judgement, failOn []string, equivalence bool) int {
	code := ExitPass
	for _, j := range js {
		if len(failOn) > 0 && !slices.Contains(failOn, j.Metric) {
			continue
		}
		switch {
		case j.Verdict == OutcomeRegression, equivalence && j.Verdict == OutcomeImprovement:
			return ExitRegression
		case equivalence && j.Verdict == OutcomeInconclusive:
			code = ExitInconclusive
		}
	}
	return code
}
