package judge

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// The QA's saturation question is one decision, not two estimates: is the
// candidate's saturation more than T below the baseline's? It is asked of
// paired runs. Each pair is one run of each build at the same overload
// rate (above the baseline's saturation), run back to back in alternating
// order (AB, BA, AB, …), each on a fresh testnet. Under overload an
// open-loop load commits what the chain can carry: the committed tx/s of
// such a run is the build's capacity, the rate its saturation point
// converges to (the search's capacity step relies on the same fact). The
// pair's log ratio ln(cand/base) cancels whatever the machine did during
// that pair; the pairs' mean and its Student t interval give the ratio of
// the two capacities with a real interval. Why t on log ratios and not a
// bootstrap: with 3 to 12 pairs a bootstrap interval is too narrow (it
// cannot see spread it has not sampled), and the paired t interval is
// exact for normal differences and robust enough for these (docs/qa.md
// has the error rates measured by simulation from recorded runs).
//
// The rule is sequential: after each pair from MinPairs on, the interval
// decides
//
//	regression  hi < 1 - T   (the whole interval below the threshold)
//	no regression  lo > 1 - T   (same or better; improvement when lo > 1 + T)
//	otherwise   another pair, up to MaxPairs; then inconclusive
//
// A one-sided test at Level each: the false-Fail rate of an unchanged
// build is far below it, since its ratio sits T away from the boundary.

// PairedRule decides the candidate-to-baseline ratio of a metric measured
// in pairs.
type PairedRule struct {
	// Threshold T as a fraction (0.1: 10 %).
	Threshold float64 `json:"threshold"`
	// Level of the two-sided interval (0.95): each one-sided test at
	// (1 - Level)/2.
	Level float64 `json:"level"`
	// MinPairs before any decision (a t interval of 2 pairs has 1 degree
	// of freedom: 12.7 standard errors wide); MaxPairs counted pairs end
	// it. Excluded pairs (a raised overload rate, a testbed-bound run) do
	// not use that budget, up to MaxPairs of them: a QA whose first two
	// pairs measured a rate below capacity had 3 of its 4 pairs left to
	// judge with and ended inconclusive (CI, 2026-11-28).
	MinPairs int `json:"min_pairs"`
	MaxPairs int `json:"max_pairs"`
	// Equivalence asks "the same within ±T?" (two one-sided tests, each
	// at (1 - Level)/2): same ("equivalent") only when the whole interval
	// lies within (1 - T, 1 + T); regression or improvement ("not
	// equivalent") when it lies wholly beyond one end; else inconclusive.
	// Without it the rule is non-inferiority: "worse by more than T?".
	Equivalence bool `json:"equivalence,omitempty"`
	// Better is the metric's direction (capacity: higher).
	Better Better `json:"-"`
	// Prior is this machine's calibrated spread of the metric, pooled
	// with the pairs' own (zero: none).
	Prior NoisePrior `json:"prior,omitzero"`
}

// NoisePrior is a metric's spread of ln(cand/base) measured on A/A runs
// of this machine and testbed (the calibration record), with its degrees
// of freedom. Pooling it with a QA's few pairs is the classical pooled
// variance: the spread is the lab's, not the build's, so A/A runs estimate
// it; a t interval with the pooled degrees of freedom replaces one with
// n-1 (t at 2 df is 4.30, at 14 df 2.14: half the width). Guarded: pairs
// noisier than the record (F test at 5 %) are judged alone.
type NoisePrior struct {
	SDLog float64 `json:"sd_log"`
	DF    int     `json:"df"`
	// BetweenSD is the spread of a whole QA's mean ln(cand/base) across
	// A/A QAs beyond what their pairs' own spread explains: an offset
	// the pairs of one QA share (measured 2026-11-28: A/A QAs whose every
	// pair read the candidate 5-15 % low, others high, cause not found),
	// which no number of pairs in one QA averages away. BetweenDF is the
	// A/A QAs it rests on; zero: none known. The interval adds it to the
	// mean's variance, with Welch-Satterthwaite degrees of freedom.
	BetweenSD float64 `json:"between_sd_log,omitempty"`
	BetweenDF int     `json:"between_df,omitempty"`
}

func (p NoisePrior) between() bool { return p.BetweenSD > 0 && p.BetweenDF >= 1 }

// meanSE is the standard error of a mean of n log ratios of spread sd
// (df degrees of freedom) and its degrees of freedom, with the between-QA
// spread added when known (Welch-Satterthwaite).
func (p NoisePrior) meanSE(sd float64, n int, df float64) (se, dfOut float64) {
	w := sd * sd / float64(n)
	if !p.between() {
		return math.Sqrt(w), df
	}
	bb := p.BetweenSD * p.BetweenSD
	return math.Sqrt(w + bb), (w + bb) * (w + bb) / (w*w/df + bb*bb/float64(p.BetweenDF))
}

func (p NoisePrior) usable() bool { return p.SDLog > 0 && p.DF >= 2 }

// DefaultPairedRule is the QA's saturation rule.
func DefaultPairedRule() PairedRule {
	return PairedRule{Threshold: 0.1, Level: 0.95, MinPairs: 3, MaxPairs: 10, Better: HigherIsBetter}
}

// Pair is one pair's measurements (Base, Cand > 0). A pair whose run was
// excluded (testbed-bound, failed) carries why and is not counted.
type Pair struct {
	Base     float64 `json:"base"`
	Cand     float64 `json:"cand"`
	Excluded string  `json:"excluded,omitempty"`
}

// PairedVerdict is the decision and what it rests on.
type PairedVerdict struct {
	Outcome Outcome `json:"outcome"`
	// Pairs counted; Excluded left out (testbed-bound or failed).
	Pairs    int `json:"pairs"`
	Excluded int `json:"excluded,omitempty"`
	// Ratio is the geometric mean of cand/base over the pairs, [Lo, Hi]
	// its Level interval (0 when fewer than 2 pairs: no interval).
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"ratio_lo,omitempty"`
	Hi    float64 `json:"ratio_hi,omitempty"`
	Level float64 `json:"level"`
	// SDLog is the pairs' standard deviation of ln(cand/base): the lab's
	// noise for this metric, what the calibration record keeps.
	SDLog float64 `json:"sd_log,omitempty"`
	// PooledDF: the interval's degrees of freedom when the spread was
	// pooled with the calibration's (0: the pairs alone); Noisier: the
	// pairs were noisier than the calibration, so it was not used.
	PooledDF int  `json:"pooled_df,omitempty"`
	Noisier  bool `json:"noisier_than_calibrated,omitempty"`
	// BetweenSD: the calibration's between-QA spread, added to the
	// interval (0: none).
	BetweenSD float64 `json:"between_sd_log,omitempty"`
	// MDE is the smallest change (a fraction) that these pairs detect
	// with 80 % power at the test's level; 0 when not known.
	MDE float64 `json:"mde,omitempty"`
	// PairsNeeded, for an undecided ratio, estimates the pairs that would
	// decide it at the present spread (-1: none would, the ratio sits on
	// the threshold).
	PairsNeeded int `json:"pairs_needed,omitempty"`
	// Decided: the interval is off the threshold (or no more pairs help).
	Decided bool   `json:"decided"`
	Why     string `json:"why"`
	Rule    string `json:"rule"`
}

// worseBound is the ratio candidate/baseline that is worse by T: 1 - T
// for a metric that is better higher, 1/(1 - T) for one better lower (the
// same distance on the log scale the rule decides on).
func (r PairedRule) worseBound() float64 {
	if r.Better == LowerIsBetter {
		return 1 / (1 - r.Threshold)
	}
	return 1 - r.Threshold
}

// String states the rule.
func (r PairedRule) String() string {
	s := r.base()
	if r.Prior.usable() {
		s += fmt.Sprintf("; the spread pooled with this machine's calibrated %.3f (%d df) unless the pairs are noisier (F test, 5 %%)", r.Prior.SDLog, r.Prior.DF)
	}
	if r.Prior.between() {
		s += fmt.Sprintf("; the interval also carries the between-QA spread %.3f of %d A/A QAs", r.Prior.BetweenSD, r.Prior.BetweenDF)
	}
	return s
}

func (r PairedRule) base() string {
	if r.Equivalence {
		return fmt.Sprintf("paired runs, each pair's ratio variant/base; the geometric mean ratio with its %g %% Student t interval over the pairs (log scale), "+
			"two one-sided tests at %g %% each: equivalent when the interval lies within (%s, %s), not equivalent (worse or better) when it lies wholly beyond one end, "+
			"else another pair, from %d pairs up to %d, then inconclusive",
			100*r.Level, 100*(1-r.Level)/2, fmtRatio(1-r.Threshold), fmtRatio(1+r.Threshold), r.MinPairs, r.MaxPairs)
	}
	if r.Better == LowerIsBetter {
		return fmt.Sprintf("paired runs of both builds, alternating order, each pair's ratio candidate/baseline; the geometric mean ratio with its %g %% Student t interval over the pairs (log scale): "+
			"regression when the interval's lower end is above %s, no regression when its upper end is below %s (improvement below %s), "+
			"else another pair, from %d pairs up to %d, then inconclusive",
			100*r.Level, fmtRatio(r.worseBound()), fmtRatio(r.worseBound()), fmtRatio(1/(1+r.Threshold)), r.MinPairs, r.MaxPairs)
	}
	return fmt.Sprintf("paired runs of both builds, alternating order, each pair's ratio candidate/baseline; the geometric mean ratio with its %g %% Student t interval over the pairs (log scale): "+
		"regression when the interval's upper end is below %s, no regression when its lower end is above %s (improvement above %s), "+
		"else another pair, from %d pairs up to %d, then inconclusive",
		100*r.Level, fmtRatio(1-r.Threshold), fmtRatio(1-r.Threshold), fmtRatio(1+r.Threshold), r.MinPairs, r.MaxPairs)
}

func fmtRatio(x float64) string { return fmt.Sprintf("%.3g", x) }

// Decide applies the rule to the pairs so far. Decided is false while
// another pair could settle it (the caller runs one and asks again).
func (r PairedRule) Decide(pairs []Pair) PairedVerdict {
	v := PairedVerdict{Level: r.Level, Rule: r.String(), Outcome: OutcomeInconclusive}
	var d []float64
	var excl []string
	for _, p := range pairs {
		switch {
		case p.Excluded != "":
			excl = append(excl, p.Excluded)
		case !(p.Base > 0) || !(p.Cand > 0) || math.IsInf(p.Base, 0) || math.IsInf(p.Cand, 0):
			excl = append(excl, fmt.Sprintf("no value (baseline %g, candidate %g)", p.Base, p.Cand))
		default:
			x := math.Log(p.Cand / p.Base)
			if r.Better == LowerIsBetter {
				x = -x // oriented: > 0 is better
			}
			d = append(d, x)
		}
	}
	v.Pairs, v.Excluded = len(d), len(excl)
	if len(d) == 0 {
		v.Why = "no pair measured"
		if len(excl) > 0 {
			v.Why = fmt.Sprintf("no pair counted: %d excluded (%s)", len(excl), strings.Join(excl, "; "))
		}
		v.Decided = r.spent(len(d), len(pairs))
		return v
	}
	n := float64(len(d))
	mean := 0.0
	for _, x := range d {
		mean += x
	}
	mean /= n
	orient := func(x float64) float64 { // back to cand/base
		if r.Better == LowerIsBetter {
			return math.Exp(-x)
		}
		return math.Exp(x)
	}
	v.Ratio = round6(orient(mean))
	theta := math.Log(1 - r.Threshold)
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	df := n - 1
	sd := 0.0
	if df > 0 {
		sd = math.Sqrt(ss / df)
	}
	v.SDLog = round6(sd)
	pool := ""
	if pr := r.Prior; pr.usable() {
		if df > 0 && sd > pr.SDLog && 1-FCDF(sd*sd/(pr.SDLog*pr.SDLog), df, float64(pr.DF)) < 0.05 {
			// Today's runs are noisier than the calibration says (F test,
			// 5 %): the record does not describe them, judge them alone.
			v.Noisier = true
			pool = fmt.Sprintf("; spread %.3f is above the calibrated %.3f (F test, 5 %%): judged without the calibration", sd, pr.SDLog)
		} else {
			// Pooled with the calibration's spread: its degrees of
			// freedom come from A/A runs of this machine and testbed.
			sd = math.Sqrt((ss + float64(pr.DF)*pr.SDLog*pr.SDLog) / (df + float64(pr.DF)))
			df += float64(pr.DF)
			v.PooledDF = int(df)
			pool = fmt.Sprintf("; spread pooled with the calibration's %.3f (%d df)", pr.SDLog, pr.DF)
		}
	}
	if v.PooledDF == 0 {
		if len(d) < 2 {
			v.Why = fmt.Sprintf("one pair (ratio %.3f): one run per build has no spread, not significant", v.Ratio)
			v.PairsNeeded = max(r.MinPairs, 2)
			v.Decided = r.spent(len(d), len(pairs))
			return v
		}
		if sd < 1e-12 {
			// Pairs that agree exactly give a zero-width "interval": no
			// confidence can be computed from them.
			v.Why = fmt.Sprintf("%d pairs with the same ratio %.3f: no spread, no interval, not significant", len(d), v.Ratio)
			v.PairsNeeded = len(d) + 1
			v.Decided = r.spent(len(d), len(pairs))
			return v
		}
	}
	pairsDF := df // of the spread alone (pooled or not)
	se, df := r.Prior.meanSE(sd, len(d), df)
	if b := r.Prior; b.between() {
		v.BetweenSD = b.BetweenSD
		pool += fmt.Sprintf("; with the between-QA spread %.3f of %d A/A QAs", b.BetweenSD, b.BetweenDF)
	}
	alpha := (1 - r.Level) / 2
	tq := StudentTQuantile(1-alpha, df)
	half := tq * se
	lo, hi := mean-half, mean+half
	if r.Better == LowerIsBetter {
		v.Lo, v.Hi = round6(math.Exp(-hi)), round6(math.Exp(-lo))
	} else {
		v.Lo, v.Hi = round6(math.Exp(lo)), round6(math.Exp(hi))
	}
	v.MDE = round6(1 - math.Exp(-(tq+StudentTQuantile(0.8, df))*se))
	iv := fmt.Sprintf("ratio %.3f, %g %% interval [%.3f, %.3f] over %d pairs%s", v.Ratio, 100*r.Level, v.Lo, v.Hi, len(d), pool)
	if len(excl) > 0 {
		iv += fmt.Sprintf(" (%d excluded: %s)", len(excl), strings.Join(excl, "; "))
	}
	switch {
	case len(d) < r.MinPairs:
		v.Why = fmt.Sprintf("%s: fewer than the %d pairs a decision needs", iv, r.MinPairs)
		v.PairsNeeded = r.MinPairs
		return v
	case r.Equivalence:
		return r.equivalence(v, iv, mean, lo, hi, func(dist float64) int {
			return pairsNeededBetween(sd, r.Prior, dist, r.Level, len(d), pairsDF-n+1)
		}, r.spent(len(d), len(pairs)))
	case hi < theta:
		v.Outcome, v.Decided = OutcomeRegression, true
		v.Why = fmt.Sprintf("%s: worse by more than %s", iv, pct(r.Threshold))
		return v
	case lo > math.Log(1+r.Threshold):
		v.Outcome, v.Decided = OutcomeImprovement, true
		v.Why = fmt.Sprintf("%s: better by more than %s", iv, pct(r.Threshold))
		return v
	case lo > theta:
		v.Outcome, v.Decided = OutcomeSame, true
		v.Why = fmt.Sprintf("%s: not worse by more than %s", iv, pct(r.Threshold))
		return v
	}
	// Undecided: the interval straddles 1 - T. Pairs that would shrink
	// the half-width below the distance of the mean from the threshold.
	v.PairsNeeded = pairsNeededBetween(sd, r.Prior, mean-theta, r.Level, len(d), pairsDF-n+1)
	need := "no number of pairs would: the ratio sits on the threshold"
	if r.Prior.between() {
		need = fmt.Sprintf("no number of pairs would: the between-QA spread %.3f (%d A/A QAs) alone is too wide for the ratio's distance from the threshold; more A/A QAs narrow its estimate (benchnet calibrate), removing the offset between QAs would decide", r.Prior.BetweenSD, r.Prior.BetweenDF)
	}
	if v.PairsNeeded > 0 {
		need = fmt.Sprintf("~%d pairs would decide at this spread", v.PairsNeeded)
	}
	v.Why = fmt.Sprintf("%s straddles %s: %s", iv, fmtRatio(r.worseBound()), need)
	v.Decided = r.spent(len(d), len(pairs))
	return v
}

// equivalence decides "the same within ±T?" on the ratio itself, not on
// the metric's oriented scale: the margin is (1 - T, 1 + T) of
// candidate/base whichever way is better (oriented, a lower-is-better
// metric's margin would be (1/(1+T), 1/(1-T)): an A/A latency interval
// reaching 1.104 read "equivalent within ±10 %"). mean, lo and hi are on
// the oriented log scale; need gives the pairs that would bring the
// interval a distance dist narrower.
func (r PairedRule) equivalence(v PairedVerdict, iv string, mean, lo, hi float64, need func(dist float64) int, spent bool) PairedVerdict {
	if r.Better == LowerIsBetter {
		mean, lo, hi = -mean, -hi, -lo // back to ln(candidate/base)
	}
	down, up := math.Log(1-r.Threshold), math.Log(1+r.Threshold)
	worse := func(below bool) bool { return below == (r.Better != LowerIsBetter) }
	switch {
	case hi < down || lo > up:
		v.Outcome, v.Decided = OutcomeImprovement, true
		word := "better"
		if worse(hi < down) {
			v.Outcome, word = OutcomeRegression, "worse"
		}
		v.Why = fmt.Sprintf("%s: not equivalent: %s by more than %s", iv, word, pct(r.Threshold))
	case lo > down && hi < up:
		v.Outcome, v.Decided = OutcomeSame, true
		v.Why = fmt.Sprintf("%s: equivalent within ±%s", iv, pct(r.Threshold))
	default:
		// The interval reaches past an end: pairs that would bring it
		// inside the nearer end, or wholly past it.
		v.PairsNeeded = need(min(math.Abs(mean-down), math.Abs(mean-up)))
		why := "no number of pairs would: the ratio sits on an end of the margin"
		if v.PairsNeeded > 0 {
			why = fmt.Sprintf("~%d pairs would decide at this spread", v.PairsNeeded)
		}
		v.Why = fmt.Sprintf("%s reaches past ±%s: %s", iv, pct(r.Threshold), why)
		v.Decided = spent
	}
	return v
}

// spent: no pair is left to run, MaxPairs counted or as many excluded
// on top of them.
func (r PairedRule) spent(counted, all int) bool {
	return counted >= r.MaxPairs || all-counted >= r.MaxPairs
}

// pairsNeededBetween is the smallest n whose t half-width at spread sd
// (and the prior's between-QA spread, when known) is below |dist| (-1:
// none up to 1000); extraDF are the calibration's degrees of freedom
// pooled into the spread.
func pairsNeededBetween(sd float64, p NoisePrior, dist float64, level float64, have int, extraDF float64) int {
	dist = math.Abs(dist)
	if dist < 1e-9 {
		return -1
	}
	decides := func(n int) bool {
		se, df := p.meanSE(sd, n, float64(n-1)+extraDF)
		return StudentTQuantile(1-(1-level)/2, df)*se < dist
	}
	// The half-width shrinks as n grows (se falls, df grows): bisect for
	// the first n that decides. A linear walk asked ~1000 quantiles of
	// distinct Welch-Satterthwaite df whenever the between-QA spread
	// alone kept every n from deciding (the simulation took minutes).
	lo, hi := max(have+1, 2), 1000
	if lo > hi || !decides(hi) {
		return -1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// MDE is the minimum detectable effect of a paired t test on log ratios:
// the true change (a fraction, e.g. 0.08 = 8 %) that n pairs of spread sd
// (of the log ratio) detect with the given power at the test's level
// (one-sided at (1-level)/2, as the rule decides).
func MDE(sd float64, n int, level, power float64) float64 {
	return mdeDF(sd, n, float64(n-1), level, power)
}

// mdeDF is MDE with the spread's degrees of freedom given (more than n-1
// when pooled with a calibration).
func mdeDF(sd float64, n int, df, level, power float64) float64 {
	if n < 1 || !(df > 0) || !(sd >= 0) {
		return 0
	}
	delta := (StudentTQuantile(1-(1-level)/2, df) + StudentTQuantile(power, df)) * sd / math.Sqrt(float64(n))
	return 1 - math.Exp(-delta)
}

// PairsFor is the pairs a decision at threshold t (a fraction) needs with
// 80 % power at spread sd: the smallest n whose MDE is at most t (0: more
// than max).
func PairsFor(sd, t, level float64, maxN int) int {
	for n := 2; n <= maxN; n++ {
		if MDE(sd, n, level, 0.8) <= t {
			return n
		}
	}
	return 0
}

// PairsForPrior is PairsFor for a QA judged with the calibration p: its
// spread pooled with the pairs' (p.DF more degrees of freedom) and its
// between-QA spread added to every interval, which no number of pairs
// averages away (0: more than maxN, or never).
func PairsForPrior(p NoisePrior, t, level float64, maxN int) int {
	for n := 2; n <= maxN; n++ {
		se, df := p.meanSE(p.SDLog, n, float64(n-1+p.DF))
		if 1-math.Exp(-(StudentTQuantile(1-(1-level)/2, df)+StudentTQuantile(0.8, df))*se) <= t {
			return n
		}
	}
	return 0
}

// tqCache memoises StudentTQuantile: the rules ask for few (p, df) pairs
// many times (a simulation asks millions).
var tqCache sync.Map

// StudentTQuantile is the p quantile of Student's t with df degrees of
// freedom (df > 0), by bisection on the CDF.
func StudentTQuantile(p, df float64) float64 {
	key := [2]float64{p, df}
	if v, ok := tqCache.Load(key); ok {
		return v.(float64)
	}
	q := studentTQuantile(p, df)
	tqCache.Store(key, q)
	return q
}

func studentTQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// FCDF is P(F <= x) for Fisher's F with d1, d2 degrees of freedom.
func FCDF(x, d1, d2 float64) float64 {
	if !(x > 0) {
		return 0
	}
	return regIncBeta(d1/2, d2/2, d1*x/(d1*x+d2))
}

// StudentTCDF is P(T <= t) for Student's t with df degrees of freedom.
func StudentTCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// its continued fraction (Lentz's method).
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBeta(b, a, 1-x)
	}
	const tiny = 1e-300
	f, c, d := 1.0, 1.0, 0.0
	for i := 0; i <= 400; i++ {
		m := float64(i / 2)
		var num float64
		switch {
		case i == 0:
			num = 1
		case i%2 == 0:
			num = m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		default:
			num = -((a + m) * (a + b + m) * x) / ((a + 2*m) * (a + 2*m + 1))
		}
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		d = 1 / d
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		cd := c * d
		f *= cd
		if math.Abs(1-cd) < 1e-14 {
			break
		}
	}
	return front * (f - 1) / a
}
