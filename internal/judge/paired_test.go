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
