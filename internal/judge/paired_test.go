package judge

import (
	"math"
	"strings"
	"testing"
)

func TestStudentTQuantile(t *testing.T) {
	// Published two-sided 95 % and one-sided 80 % critical values.
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 4, 2.776}, {0.975, 10, 2.228}, {0.975, 30, 2.042},
		{0.8, 4, 0.941}, {0.8, 9, 0.883}, {0.95, 5, 2.015}, {0.025, 3, -3.182},
	} {
		if got := StudentTQuantile(c.p, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("t(%g, df %g) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
	// The table SpreadOf uses agrees with it.
	for df := 1; df <= 30; df++ {
		if a, b := tQuantile975(df), StudentTQuantile(0.975, float64(df)); math.Abs(a-b) > 0.001 {
			t.Errorf("df %d: table %.3f, computed %.4f", df, a, b)
		}
	}
}

func pairsOf(base float64, ratios ...float64) []Pair {
	var ps []Pair
	for _, r := range ratios {
		ps = append(ps, Pair{Base: base, Cand: base * r})
	}
	return ps
}

func TestPairedDecide(t *testing.T) {
	r := DefaultPairedRule()
	for _, c := range []struct {
		name    string
		pairs   []Pair
		want    Outcome
		decided bool
	}{
		{"A/A, small spread", pairsOf(500, 1.02, 0.97, 1.01, 0.99), OutcomeSame, true},
		{"20 % slower", pairsOf(500, 0.79, 0.81, 0.80, 0.78), OutcomeRegression, true},
		{"30 % faster", pairsOf(500, 1.31, 1.29, 1.30), OutcomeImprovement, true},
		{"on the threshold", pairsOf(500, 0.85, 0.95, 0.90, 0.88), OutcomeInconclusive, false},
		{"two pairs only", pairsOf(500, 0.5, 0.52), OutcomeInconclusive, false},
		{"pairs that agree exactly have no spread", pairsOf(500, 0.5, 0.5, 0.5, 0.5), OutcomeInconclusive, false},
		{"one pair", pairsOf(500, 0.5), OutcomeInconclusive, false},
		{"excluded pairs do not count", append(pairsOf(500, 1, 1.01), Pair{Base: 500, Cand: 1, Excluded: "testbed-bound"}), OutcomeInconclusive, false},
	} {
		v := r.Decide(c.pairs)
		if v.Outcome != c.want || v.Decided != c.decided {
			t.Errorf("%s: %s decided=%v (%s), want %s decided=%v", c.name, v.Outcome, v.Decided, v.Why, c.want, c.decided)
		}
		if v.Pairs >= 2 && v.SDLog > 0 && !(v.Lo <= v.Ratio && v.Ratio <= v.Hi && v.Lo < v.Hi) {
			t.Errorf("%s: interval [%g, %g] around %g", c.name, v.Lo, v.Hi, v.Ratio)
		}
	}
}

// A single pair, or identical runs, never reads as a decision at 95 %: one
// run per build has no spread.
func TestPairedOneRunNotSignificant(t *testing.T) {
	r := DefaultPairedRule()
	r.MinPairs = 1
	for _, ratio := range []float64{0.5, 0.89, 0.91, 1, 1.5} {
		v := r.Decide(pairsOf(400, ratio))
		if v.Decided || v.Outcome != OutcomeInconclusive || v.Lo != 0 || v.Hi != 0 {
			t.Errorf("one pair at %g: %+v", ratio, v)
		}
		if !strings.Contains(v.Why, "not significant") {
			t.Errorf("one pair at %g: why %q does not say it is not significant", ratio, v.Why)
		}
	}
}

func TestPairedMaxPairsEnds(t *testing.T) {
	r := DefaultPairedRule()
	r.MaxPairs = 4
	v := r.Decide(pairsOf(500, 0.85, 0.95, 0.90, 0.88))
	if !v.Decided || v.Outcome != OutcomeInconclusive || v.PairsNeeded == 0 {
		t.Errorf("at max pairs: %+v", v)
	}
}

// TestPairedExcludedBudget: excluded pairs do not use the MaxPairs
// counted ones, but as many of them end the step too.
func TestPairedExcludedBudget(t *testing.T) {
	r := DefaultPairedRule()
	r.MaxPairs = 4
	below := Pair{Base: 1000, Cand: 1000, Excluded: "below capacity"}
	for _, c := range []struct {
		name    string
		pairs   []Pair
		decided bool
	}{
		{"2 excluded, 2 counted", append([]Pair{below, below}, pairsOf(500, 0.85, 0.95)...), false},
		{"2 excluded, 3 counted", append([]Pair{below, below}, pairsOf(500, 0.85, 0.95, 0.90)...), false},
		{"2 excluded, 4 counted", append([]Pair{below, below}, pairsOf(500, 0.85, 0.95, 0.90, 0.88)...), true},
		{"4 excluded, 1 counted", append([]Pair{below, below, below, below}, pairsOf(500, 0.9)...), true},
		{"4 excluded", []Pair{below, below, below, below}, true},
		{"3 excluded", []Pair{below, below, below}, false},
	} {
		v := r.Decide(c.pairs)
		if v.Decided != c.decided || v.Outcome != OutcomeInconclusive {
			t.Errorf("%s: decided %v (%s), want %v, inconclusive", c.name, v.Decided, v.Why, c.decided)
		}
	}
}

func TestMDE(t *testing.T) {
	// sd 0.05 over 4 pairs (df 3): (3.182 + 0.978) x 0.05 / 2 = 0.104 on
	// the log scale, a change of 1 - exp(-0.104) = 9.88 %.
	if got := MDE(0.05, 4, 0.95, 0.8); math.Abs(got-0.0988) > 0.0005 {
		t.Errorf("MDE = %.4f, want 0.0988", got)
	}
	if n := PairsFor(0.05, 0.1, 0.95, 100); n != 4 {
		t.Errorf("PairsFor(0.05, 10 %%) = %d, want 4", n)
	}
	if n := PairsFor(0.5, 0.1, 0.95, 10); n != 0 {
		t.Errorf("PairsFor of a hopeless spread = %d, want 0", n)
	}
}

// TestPairedPrior: the calibration's spread, pooled, decides what three
// pairs alone cannot; pairs noisier than the calibration are judged alone.
func TestPairedPrior(t *testing.T) {
	aa := pairsOf(500, math.Exp(0.06), math.Exp(-0.06), 1) // sd 0.06
	for _, c := range []struct {
		name     string
		prior    NoisePrior
		pairs    []Pair
		want     Outcome
		pooledDF int
		noisier  bool
	}{
		// t(2) 4.30 x 0.06/sqrt(3): half-width 0.149, past ln(0.9).
		{"A/A alone", NoisePrior{}, aa, OutcomeInconclusive, 0, false},
		// Pooled sd 0.052 on 13 df: half-width 0.064.
		{"A/A with the calibration", NoisePrior{SDLog: 0.05, DF: 11}, aa, OutcomeSame, 13, false},
		{"a prior of one df is not used", NoisePrior{SDLog: 0.05, DF: 1}, aa, OutcomeInconclusive, 0, false},
		{"15 % slower, calibrated", NoisePrior{SDLog: 0.05, DF: 11}, pairsOf(500, 0.80, 0.86, 0.83), OutcomeRegression, 13, false},
		{"noisier than calibrated", NoisePrior{SDLog: 0.02, DF: 11}, pairsOf(500, 1.3, 0.75, 1.0), OutcomeInconclusive, 0, true},
	} {
		r := DefaultPairedRule()
		r.Prior = c.prior
		v := r.Decide(c.pairs)
		if v.Outcome != c.want || v.PooledDF != c.pooledDF || v.Noisier != c.noisier {
			t.Errorf("%s: %s pooled df %d noisier %v (%s), want %s, %d, %v", c.name, v.Outcome, v.PooledDF, v.Noisier, v.Why, c.want, c.pooledDF, c.noisier)
		}
		if c.pooledDF > 0 && !strings.Contains(v.Why, "pooled with the calibration") {
			t.Errorf("%s: why does not say the spread was pooled: %s", c.name, v.Why)
		}
	}
	// One pair with a prior has an interval, but the rule still waits for
	// MinPairs.
	r := DefaultPairedRule()
	r.Prior = NoisePrior{SDLog: 0.05, DF: 11}
	if v := r.Decide(pairsOf(500, 0.5)); v.Decided || v.Outcome != OutcomeInconclusive || !(v.Lo > 0) {
		t.Errorf("one pair with a prior: %s decided=%v [%g, %g]", v.Outcome, v.Decided, v.Lo, v.Hi)
	}
}

func TestFCDF(t *testing.T) {
	// Published upper 5 % points of F.
	for _, c := range []struct{ x, d1, d2 float64 }{{19.0, 2, 2}, {3.98, 2, 11}, {2.165, 10, 30}} {
		if got := 1 - FCDF(c.x, c.d1, c.d2); math.Abs(got-0.05) > 0.002 {
			t.Errorf("P(F(%g,%g) > %g) = %.4f, want 0.05", c.d1, c.d2, c.x, got)
		}
	}
}

// TestPairedBetween: a calibration's between-QA spread widens the
// interval by a term that no number of pairs averages away, with
// Welch-Satterthwaite degrees of freedom.
func TestPairedBetween(t *testing.T) {
	// The control's A/A pairs of 2026-11-28, candidate low in 4 of 5.
	aa := pairsOf(1300, math.Exp(-0.152), math.Exp(-0.137), math.Exp(-0.119), math.Exp(-0.066), math.Exp(0.006))
	r := DefaultPairedRule()
	r.Prior = NoisePrior{SDLog: 0.064, DF: 9}
	within := r.Decide(aa)
	r.Prior.BetweenSD, r.Prior.BetweenDF = 0.06, 3
	with := r.Decide(aa)
	if !(with.Lo < within.Lo && with.Hi > within.Hi) {
		t.Fatalf("between-QA spread: [%g, %g], without [%g, %g]: want wider", with.Lo, with.Hi, within.Lo, within.Hi)
	}
	if within.Hi >= 1 || with.Hi <= 1 {
		t.Errorf("this A/A QA's interval: [%g, %g] within only (excludes 1), [%g, %g] with the between spread (should hold 1)", within.Lo, within.Hi, with.Lo, with.Hi)
	}
	if with.BetweenSD != 0.06 || !strings.Contains(with.Why, "between-QA spread 0.060 of 3 A/A QAs") {
		t.Errorf("verdict does not say it: %+v", with)
	}
	// However many pairs, the interval stays wider than the between term.
	many := make([]float64, 200)
	for i := range many {
		many[i] = math.Exp(0.02 * float64(i%3-1))
	}
	v := r.Decide(pairsOf(1300, many...))
	if half := math.Log(v.Hi / v.Ratio); half < 1.96*0.06 {
		t.Errorf("200 pairs: half-width %.4f on the log scale, below 1.96 x the between spread", half)
	}
	if n := PairsForPrior(NoisePrior{SDLog: 0.064, DF: 9, BetweenSD: 0.06, BetweenDF: 3}, 0.10, 0.95, 1000); n != 0 {
		t.Errorf("a 10 %% decision with a 0.06 between-QA spread on 3 QAs needs %d pairs: none would", n)
	}
	if n, n0 := PairsForPrior(NoisePrior{SDLog: 0.064, DF: 9, BetweenSD: 0.01, BetweenDF: 10}, 0.10, 0.95, 1000), PairsForPrior(NoisePrior{SDLog: 0.064, DF: 9}, 0.10, 0.95, 1000); !(n >= n0 && n0 > 0) {
		t.Errorf("pairs for 10 %%: %d with a small between spread, %d without: want at least as many", n, n0)
	}
}

// An interval the between-QA spread keeps open says so, and what would
// decide.
func TestPairedBetweenSaysWhy(t *testing.T) {
	r := DefaultPairedRule()
	r.Prior = NoisePrior{SDLog: 0.064, DF: 9, BetweenSD: 0.06, BetweenDF: 3}
	v := r.Decide(pairsOf(1300, 1.0, 1.02, 0.98))
	if v.Decided || v.Outcome != OutcomeInconclusive || v.PairsNeeded != -1 || !strings.Contains(v.Why, "between-QA spread 0.060 (3 A/A QAs) alone is too wide") {
		t.Errorf("%s decided=%v needed=%d: %s", v.Outcome, v.Decided, v.PairsNeeded, v.Why)
	}
}

// TestPairedEquivalence: asked "the same within ±T?", a ratio whose whole
// interval lies inside (1 - T, 1 + T) is equivalent; wholly beyond one end
// not equivalent (either way); an interval that reaches past an end is
// inconclusive, where non-inferiority would have said "same".
func TestPairedEquivalence(t *testing.T) {
	eq := DefaultPairedRule()
	eq.Equivalence = true
	ni := DefaultPairedRule()
	for _, c := range []struct {
		name     string
		pairs    []Pair
		eq, ni   Outcome
		whyEq    string
		eqNeeded bool
	}{
		{"A/A", pairsOf(500, 1.01, 0.99, 1.0, 1.02, 0.98), OutcomeSame, OutcomeSame, "equivalent within ±10 %", false},
		{"25 % better", pairsOf(500, 1.24, 1.26, 1.25, 1.23), OutcomeImprovement, OutcomeImprovement, "not equivalent: better by more than 10 %", false},
		{"25 % worse", pairsOf(500, 0.74, 0.76, 0.75, 0.77), OutcomeRegression, OutcomeRegression, "not equivalent: worse by more than 10 %", false},
		// +8 % with spread: not worse (non-inferiority), but the interval
		// reaches past +10 %: equivalence cannot be claimed yet.
		{"8 % better, noisy", pairsOf(500, 1.02, 1.14, 1.08, 1.06, 1.10), OutcomeInconclusive, OutcomeSame, "reaches past ±10 %", true},
	} {
		v := eq.Decide(c.pairs)
		if v.Outcome != c.eq || !strings.Contains(v.Why, c.whyEq) {
			t.Errorf("%s: equivalence %s (%s), want %s with %q", c.name, v.Outcome, v.Why, c.eq, c.whyEq)
		}
		if c.eqNeeded && v.PairsNeeded <= 0 {
			t.Errorf("%s: inconclusive without the pairs that would decide: %s", c.name, v.Why)
		}
		if w := ni.Decide(c.pairs); w.Outcome != c.ni {
			t.Errorf("%s: non-inferiority %s (%s), want %s", c.name, w.Outcome, w.Why, c.ni)
		}
	}
	// A lower-is-better metric: the margin is on the ratio too, not on
	// its oriented scale (an A/A latency at [0.949, 1.104] is not
	// equivalent within ±10 %; oriented, it read so).
	lat := eq
	lat.Better = LowerIsBetter
	for _, c := range []struct {
		name  string
		pairs []Pair
		want  Outcome
	}{
		{"latency A/A reaching 1.104", pairsOf(800, 1.15, 0.92, 1.10, 0.95, 1.12, 0.96, 1.08, 0.93), OutcomeInconclusive},
		{"latency A/A", pairsOf(800, 1.01, 0.99, 1.0, 1.02, 0.98), OutcomeSame},
		{"latency 25 % higher", pairsOf(800, 1.24, 1.26, 1.25, 1.23), OutcomeRegression},
		{"latency 25 % lower", pairsOf(800, 0.74, 0.76, 0.75, 0.77), OutcomeImprovement},
	} {
		v := lat.Decide(c.pairs)
		if v.Outcome != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, v.Outcome, v.Why, c.want)
		}
		if c.want == OutcomeSame && !(v.Lo > 0.9 && v.Hi < 1.1) {
			t.Errorf("%s: equivalent with the interval [%g, %g]", c.name, v.Lo, v.Hi)
		}
		if c.want == OutcomeInconclusive && v.Hi < 1.1 && v.Lo > 0.9 {
			t.Errorf("%s: inconclusive with the interval [%g, %g] inside the margin", c.name, v.Lo, v.Hi)
		}
	}
	if !strings.Contains(eq.String(), "two one-sided tests") {
		t.Errorf("the rule does not say it is an equivalence test: %s", eq)
	}
}

// TestExitCodeEquivalence: asked for equivalence, a difference either way
// fails and an undecided metric is inconclusive; --fail-on still filters.
func TestExitCodeEquivalence(t *testing.T) {
	js := []Judgement{{Metric: "tps", Verdict: OutcomeSame}, {Metric: "latency_avg", Verdict: OutcomeImprovement}, {Metric: "latency_p95", Verdict: OutcomeInconclusive}}
	for _, c := range []struct {
		failOn      []string
		equivalence bool
		want        int
	}{
		{nil, false, 0},
		{nil, true, ExitRegression},
		{[]string{"tps", "latency_p95"}, true, ExitInconclusive},
		{[]string{"tps"}, true, 0},
		{[]string{"tps", "latency_p95"}, false, 0},
	} {
		if got := ExitCode(js, c.failOn, c.equivalence); got != c.want {
			t.Errorf("fail-on %v, equivalence %v: exit %d, want %d", c.failOn, c.equivalence, got, c.want)
		}
	}
}
