package judge

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func mustMetric(t *testing.T, key string) Metric {
	t.Helper()
	ms, _ := MetricsOf("cometbft")
	i := slices.IndexFunc(ms, func(m Metric) bool { return m.Key == key })
	if i < 0 {
		t.Fatalf("no CometBFT metric %q (have %v)", key, ms)
	}
	return ms[i]
}

// Hand-made samples: per-run values of three or more repeats per side.
func TestCompareVerdicts(t *testing.T) {
	cases := []struct {
		name          string
		metric        string
		base, variant []float64
		want          Outcome
		wantExit      int
		wantNeeded    bool // an inconclusive verdict says how many repeats
	}{
		// TPS down ~30 % with 1 % noise: regression.
		{"clear regression (tps)", "tps", []float64{1000, 1010, 990}, []float64{700, 705, 695}, OutcomeRegression, 3, false},
		// p95 latency up 50 %.
		{"clear regression (latency)", "latency_p95", []float64{200, 205, 198, 202}, []float64{300, 310, 295, 305}, OutcomeRegression, 3, false},
		// latency halves: improvement (lower is better).
		{"clear improvement", "latency_p50", []float64{400, 410, 395}, []float64{200, 198, 205}, OutcomeImprovement, 0, false},
		// TPS up 40 %: improvement (higher is better).
		{"improvement (tps)", "tps", []float64{500, 505, 495}, []float64{700, 702, 698}, OutcomeImprovement, 0, false},
		// The same configuration twice: small noise around the same mean.
		{"A/A pair", "tps", []float64{1000, 980, 1015}, []float64{995, 1010, 985}, OutcomeSame, 0, false},
		// Delta ≈ +10 % worse with ±15 % noise: straddles the threshold.
		{"straddling interval", "latency_avg", []float64{100, 80, 120}, []float64{110, 85, 135}, OutcomeInconclusive, 0, true},
		// Worse by 12 % but noisy: inconclusive, not regression.
		{"noisy 12% worse", "tps", []float64{1000, 800, 1200}, []float64{880, 700, 1060}, OutcomeInconclusive, 0, true},
		// One run per side: no interval, inconclusive whatever the delta.
		{"one run each", "tps", []float64{1000}, []float64{500}, OutcomeInconclusive, 0, true},
	}
	r := RegressionRule{Seed: 1}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMetric(t, tc.metric)
			j := r.Compare(m, "runs", RunUnits(tc.base), RunUnits(tc.variant))
			if j.Verdict != tc.want {
				t.Fatalf("verdict %s (delta %.2f%% [%v, %v], %s), want %s", j.Verdict, j.DeltaPct, deref(j.CILo), deref(j.CIHi), j.Reason, tc.want)
			}
			if got := ExitCode([]Judgement{j}, nil, false); got != tc.wantExit {
				t.Errorf("exit %d, want %d", got, tc.wantExit)
			}
			if tc.wantNeeded && j.RepeatsNeeded == 0 {
				t.Errorf("inconclusive without repeats needed")
			}
			if j.CILo != nil && (*j.CILo > j.DeltaPct || *j.CIHi < j.DeltaPct) {
				t.Errorf("interval [%v, %v] does not contain the delta %v", *j.CILo, *j.CIHi, j.DeltaPct)
			}
		})
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// The interval is a function of the samples and the seed alone.
func TestDeltaCIDeterministic(t *testing.T) {
	b, v := RunUnits([]float64{10, 11, 12, 9}), RunUnits([]float64{13, 12, 14, 15})
	d1, lo1, hi1, ok1 := DeltaCI(b, v, 0, 7)
	d2, lo2, hi2, ok2 := DeltaCI(b, v, 0, 7)
	if !ok1 || !ok2 || d1 != d2 || lo1 != lo2 || hi1 != hi2 {
		t.Fatalf("two runs differ: %v %v %v / %v %v %v", d1, lo1, hi1, d2, lo2, hi2)
	}
	if want := (13.5 - 10.5) / 10.5 * 100; math.Abs(d1-want) > 1e-9 {
		t.Errorf("delta %v, want %v", d1, want)
	}
	_, lo3, hi3, _ := DeltaCI(b, v, 0, 8)
	if lo3 == lo1 && hi3 == hi1 {
		t.Errorf("another seed gives the identical interval: the seed is not used")
	}
	// Another seed moves the bounds by little (resampling noise only).
	if math.Abs(lo3-lo1) > 0.05*(hi1-lo1) || math.Abs(hi3-hi1) > 0.05*(hi1-lo1) {
		t.Errorf("seed 7 [%v, %v] vs seed 8 [%v, %v]: resampling noise too large", lo1, hi1, lo3, hi3)
	}
}

// The threshold is the user's: a 15 % regression is one at 10 %, not at 20 %.
func TestThreshold(t *testing.T) {
	m := mustMetric(t, "tps")
	b, v := RunUnits([]float64{1000, 1002, 998}), RunUnits([]float64{850, 851, 849})
	if j := (RegressionRule{Threshold: 10}).Compare(m, "runs", b, v); j.Verdict != OutcomeRegression {
		t.Errorf("at 10%%: %s", j.Verdict)
	}
	if j := (RegressionRule{Threshold: 20}).Compare(m, "runs", b, v); j.Verdict != OutcomeSame {
		t.Errorf("at 20%%: %s (%s)", j.Verdict, j.Reason)
	}
}

func TestExitCodeFailOn(t *testing.T) {
	js := []Judgement{{Metric: "tps", Verdict: OutcomeSame}, {Metric: "rss_peak", Verdict: OutcomeRegression}}
	if ExitCode(js, nil, false) != ExitRegression {
		t.Error("every metric: want 3")
	}
	if ExitCode(js, []string{"tps", "latency_p95"}, false) != 0 {
		t.Error("rss_peak not in --fail-on: want 0")
	}
}

// Block units: the statistic is recomputed from resampled blocks.
func TestBlockUnits(t *testing.T) {
	// Two runs' blocks: txs and seconds per block; the variant commits
	// half as many txs per block.
	bt, bs := []float64{100, 110, 90, 105, 95, 100}, []float64{1, 1, 1, 1, 1, 1}
	vt := []float64{50, 55, 45, 52, 48, 50}
	tps := func(txs, secs []float64) Units {
		return Units{N: len(txs), Stat: func(idx []int) float64 {
			var a, b float64
			for _, i := range idx {
				a += txs[i]
				b += secs[i]
			}
			return a / b
		}}
	}
	j := RegressionRule{Seed: 3}.Compare(mustMetric(t, "tps"), "blocks", tps(bt, bs), tps(vt, bs))
	if j.Verdict != OutcomeRegression || math.Abs(j.DeltaPct+50) > 0.5 {
		t.Fatalf("got %s %.2f%%", j.Verdict, j.DeltaPct)
	}
}

// Two runs per side that agree closely by chance, 13 % apart, but whose
// blocks are noisy (what an A/A pair on this shared machine gave): from the
// run values alone it looks like a regression; the two-stage bootstrap
// (runs, then blocks) carries the blocks' noise and does not claim one.
func TestNestedCarriesBlockNoise(t *testing.T) {
	blockMeans := func(center float64, shift int) Units {
		// 8 blocks whose mean latencies spread ±30 % around center.
		pattern := []float64{0.7, 1.3, 0.9, 1.1, 0.75, 1.25, 0.95, 1.05}
		vals := make([]float64, len(pattern))
		for i := range pattern {
			vals[i] = center * pattern[(i+shift)%len(pattern)]
		}
		return RunUnits(vals)
	}
	base := NestedUnits([]Units{blockMeans(738, 0), blockMeans(741, 3)})
	variant := NestedUnits([]Units{blockMeans(830, 1), blockMeans(838, 5)})
	m := mustMetric(t, "latency_avg")
	r := RegressionRule{Seed: 1}
	flat := r.Compare(m, "runs", RunUnits([]float64{738, 741}), RunUnits([]float64{830, 838}))
	if flat.Verdict != OutcomeRegression {
		t.Fatalf("run values alone: %s (the premise of this test)", flat.Verdict)
	}
	nested := r.Compare(m, "runs+blocks", base, variant)
	if nested.Verdict != OutcomeInconclusive {
		t.Errorf("two-stage: %s %.1f%% [%v, %v], want inconclusive", nested.Verdict, nested.DeltaPct, deref(nested.CILo), deref(nested.CIHi))
	}
	// And with MinRuns 3, run values alone from 2 runs are inconclusive too.
	r.MinRuns = 3
	if j := r.Compare(m, "runs", RunUnits([]float64{738, 741}), RunUnits([]float64{830, 838})); j.Verdict != OutcomeInconclusive || j.RepeatsNeeded != 3 {
		t.Errorf("MinRuns 3 with 2 runs: %s, repeats %d", j.Verdict, j.RepeatsNeeded)
	}
	// A 2x regression still is one through the block noise.
	slow := NestedUnits([]Units{blockMeans(1500, 1), blockMeans(1520, 5)})
	if j := r.Compare(m, "runs+blocks", base, slow); j.Verdict != OutcomeRegression {
		t.Errorf("2x slower: %s [%v, %v]", j.Verdict, deref(j.CILo), deref(j.CIHi))
	}
}

// The reason names the threshold in the delta's own sign: a TPS up 9 %
// with a wide interval straddles +10 %, not -10 %.
func TestStraddleSign(t *testing.T) {
	j := RegressionRule{Seed: 2}.Compare(mustMetric(t, "tps"), "runs", RunUnits([]float64{100, 90, 110}), RunUnits([]float64{109, 99, 119}))
	if j.Verdict != OutcomeInconclusive || !strings.Contains(j.Reason, "+10%") {
		t.Errorf("%s: %q", j.Verdict, j.Reason)
	}
}

// Non-inferiority passes an interval that reaches past -T on the better
// side but stays below +T on the worse side; the two-sided rule holds it
// inconclusive. A regression is a regression under both.
func TestNonInferiority(t *testing.T) {
	m := mustMetric(t, "tps")
	base, better := RunUnits([]float64{100, 101, 99, 100}), RunUnits([]float64{104, 121, 108, 115})
	two := RegressionRule{Seed: 1}.Compare(m, "runs", base, better)
	ni := RegressionRule{Seed: 1, NonInferiority: true}.Compare(m, "runs", base, better)
	if two.Verdict != OutcomeInconclusive || ni.Verdict != OutcomeSame {
		t.Fatalf("two-sided %s (%s), non-inferiority %s (%s): want inconclusive and same", two.Verdict, two.Reason, ni.Verdict, ni.Reason)
	}
	worse := RunUnits([]float64{80, 79, 81, 80})
	if j := (RegressionRule{Seed: 1, NonInferiority: true}).Compare(m, "runs", base, worse); j.Verdict != OutcomeRegression {
		t.Fatalf("20 %% worse under non-inferiority: %s (%s)", j.Verdict, j.Reason)
	}
}
