package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Result is a QA scenario's result, the seeds' Test Results column.
type Result string

const (
	ResultPass         Result = "Pass"
	ResultFail         Result = "Fail"
	ResultInconclusive Result = "Inconclusive"
)

// severity orders results: the overall result is the worst.
func (r Result) severity() int {
	switch r {
	case ResultPass:
		return 0
	case ResultInconclusive:
		return 1
	default:
		return 2 // Fail, or anything unknown
	}
}

// Worst is the overall result of several: Fail over Inconclusive over
// Pass; none at all is Inconclusive (nothing was decided).
func Worst(rs ...Result) Result {
	if len(rs) == 0 {
		return ResultInconclusive
	}
	w := ResultPass
	for _, r := range rs {
		if r.severity() > w.severity() {
			w = r
		}
	}
	return w
}

// ExitCodeOf maps a QA result to the process exit code.
func ExitCodeOf(r Result) int {
	switch r {
	case ResultPass:
		return ExitPass
	case ResultInconclusive:
		return ExitInconclusive
	default:
		return ExitRegression
	}
}

// ResultOf maps a scenario's metric judgements to its result, with why:
// Fail when a metric of failOn (every metric when empty) regressed; else
// Inconclusive when one of them is inconclusive; else Pass (same or
// improved). No judgement at all is Inconclusive.
func ResultOf(js []Judgement, failOn []string) (Result, string) {
	judged := func(k string) bool { return len(failOn) == 0 || slices.Contains(failOn, k) }
	var reg, inc []string
	n := 0
	for _, j := range js {
		if !judged(j.Metric) {
			continue
		}
		n++
		switch j.Verdict {
		case OutcomeRegression:
			reg = append(reg, fmt.Sprintf("%s %+.1f %%", j.Metric, j.DeltaPct))
		case OutcomeInconclusive:
			inc = append(inc, j.Metric)
		}
	}
	switch {
	case n == 0:
		return ResultInconclusive, "no metric was judged"
	case len(reg) > 0:
		return ResultFail, "regression: " + strings.Join(reg, ", ")
	case len(inc) > 0:
		return ResultInconclusive, fmt.Sprintf("%d of %d metrics inconclusive: %s", len(inc), n, strings.Join(inc, ", "))
	default:
		return ResultPass, fmt.Sprintf("%d metrics same or better", n)
	}
}

// OutcomeResult maps one outcome (a saturation or catch-up judgement) to
// a result: regression fails, inconclusive stays inconclusive.
func OutcomeResult(o Outcome) Result {
	switch o {
	case OutcomeRegression:
		return ResultFail
	case OutcomeInconclusive, "":
		return ResultInconclusive
	default:
		return ResultPass
	}
}

// Interval is a saturation rate's bracket as qa.json records it (JSON has
// no infinity): [Lo, Hi): Lo the highest
// sustainable rate found, Hi the lowest saturated one (0: none found,
// the rate is at least Lo).
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

func (iv Interval) String() string {
	if iv.Hi <= 0 {
		return fmt.Sprintf("[%g, ∞)", iv.Lo)
	}
	return fmt.Sprintf("[%g, %g)", iv.Lo, iv.Hi)
}

// Open is the interval in CompareSaturation's form (High +Inf when
// nothing saturated).
func (iv Interval) Open() SaturationInterval {
	out := SaturationInterval{Low: iv.Lo, High: iv.Hi}
	if iv.Hi <= 0 {
		out.High = math.Inf(1)
	}
	return out
}

// CatchUpRule judges a rotating test: Fail when a cycle did not catch up
// within its timeout; else the candidate's mean catch-up time against the
// baseline's, with T in percent and an absolute floor (catch-ups of a
// second or two differ by scheduling alone).
func CatchUpRule(base, cand []float64, threshold, floorS float64) (Outcome, string) {
	if len(cand) == 0 {
		return OutcomeInconclusive, "no rotating cycle of the candidate"
	}
	for i, c := range cand {
		if c < 0 {
			return OutcomeRegression, fmt.Sprintf("cycle %d never caught up within its timeout", i+1)
		}
	}
	if len(base) == 0 {
		return OutcomeInconclusive, "no baseline cycles to compare catch-up with"
	}
	mb, mc := meanOf(base), meanOf(cand)
	for _, b := range base {
		if b < 0 {
			return OutcomeInconclusive, "a baseline cycle never caught up: no reference"
		}
	}
	limit := max(mb*threshold/100, floorS)
	d := mc - mb
	why := fmt.Sprintf("mean catch-up %.2f s vs baseline %.2f s (limit +%.2f s: %g %% or %g s)", mc, mb, limit, threshold, floorS)
	switch {
	case d > limit:
		return OutcomeRegression, why
	case d < -limit:
		return OutcomeImprovement, why
	default:
		return OutcomeSame, why
	}
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
