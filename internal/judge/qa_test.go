package judge

import (
	"math"
	"strings"
	"testing"
)

func TestQAResultMapping(t *testing.T) {
	j := func(metric string, o Outcome) Judgement { return Judgement{Metric: metric, Verdict: o, DeltaPct: 12} }
	for _, tc := range []struct {
		name   string
		js     []Judgement
		failOn []string
		want   Result
		why    string
	}{
		{"all same", []Judgement{j("tps", OutcomeSame), j("latency_p95", OutcomeImprovement)}, nil, ResultPass, "2 metrics same or better"},
		{"one inconclusive", []Judgement{j("tps", OutcomeSame), j("latency_p95", OutcomeInconclusive)}, nil, ResultInconclusive, "1 of 2 metrics inconclusive: latency_p95"},
		{"regression beats inconclusive", []Judgement{j("tps", OutcomeRegression), j("latency_p95", OutcomeInconclusive)}, nil, ResultFail, "regression: tps +12.0 %"},
		{"regression outside fail_on", []Judgement{j("tps", OutcomeSame), j("rss_peak", OutcomeRegression)}, []string{"tps"}, ResultPass, "1 metrics"},
		{"inconclusive outside fail_on", []Judgement{j("tps", OutcomeSame), j("rss_peak", OutcomeInconclusive)}, []string{"tps"}, ResultPass, "1 metrics"},
		{"nothing judged", nil, nil, ResultInconclusive, "no metric was judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ResultOf(tc.js, tc.failOn)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("got %s (%s), want %s (%s)", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestQAWorstAndExitCodes(t *testing.T) {
	for _, tc := range []struct {
		rs   []Result
		want Result
		exit int
	}{
		{[]Result{ResultPass, ResultPass}, ResultPass, 0},
		{[]Result{ResultPass, ResultInconclusive}, ResultInconclusive, 4},
		{[]Result{ResultInconclusive, ResultFail, ResultPass}, ResultFail, 3},
		{nil, ResultInconclusive, 4},
	} {
		if got := Worst(tc.rs...); got != tc.want || ExitCodeOf(got) != tc.exit {
			t.Errorf("Worst(%v) = %s exit %d, want %s exit %d", tc.rs, got, ExitCodeOf(got), tc.want, tc.exit)
		}
	}
	for o, want := range map[Outcome]Result{OutcomeRegression: ResultFail, OutcomeInconclusive: ResultInconclusive, OutcomeSame: ResultPass, OutcomeImprovement: ResultPass, "": ResultInconclusive} {
		if got := OutcomeResult(o); got != want {
			t.Errorf("OutcomeResult(%q) = %s, want %s", o, got, want)
		}
	}
}

func TestCatchUpRule(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand []float64
		want       Outcome
		why        string
	}{
		{"a cycle never caught up", []float64{3, 3}, []float64{3, -1}, OutcomeRegression, "cycle 2 never caught up"},
		{"within the floor", []float64{2, 2}, []float64{4, 5}, OutcomeSame, "mean catch-up 4.50 s"},
		{"slower past both limits", []float64{10, 10}, []float64{20, 22}, OutcomeRegression, "limit +5.00 s"},
		{"faster", []float64{20, 22}, []float64{8, 9}, OutcomeImprovement, ""},
		{"no baseline", nil, []float64{3}, OutcomeInconclusive, "no baseline cycles"},
		{"no candidate cycles", []float64{3}, nil, OutcomeInconclusive, "no rotating cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := CatchUpRule(tc.base, tc.cand, 50, 5)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("got %s (%s), want %s (%s)", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestIntervalOpen(t *testing.T) {
	if iv := (Interval{Lo: 100, Hi: 0}).Open(); iv.Low != 100 || !math.IsInf(iv.High, 1) {
		t.Errorf("no saturated rate: %v", iv)
	}
	v := CompareSaturation(Interval{Lo: 1000, Hi: 1100}.Open(), Interval{Lo: 600, Hi: 700}.Open(), 0.1)
	if v.Outcome != OutcomeRegression {
		t.Errorf("candidate far below: %s (%s)", v.Outcome, v.Why)
	}
}
