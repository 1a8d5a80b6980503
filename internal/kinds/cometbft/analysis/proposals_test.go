package analysis

import (
	"math"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// histRows is one node's proposal histogram scraped at t: count, sum and
// the cumulative buckets (le 0, 0.2, 1, 1.5, +Inf).
func histRows(node, timely string, t int64, count, sum float64, cum [5]float64) []rundir.Sample {
	const m = "cometbft_" + ProposalTimestampDifference
	l := `{is_timely="` + timely + `"}`
	out := []rundir.Sample{
		{TimeNs: t, Node: node, Metric: m + "_count", Labels: l, Value: count},
		{TimeNs: t, Node: node, Metric: m + "_sum", Labels: l, Value: sum},
	}
	for i, le := range []string{"0", "0.2", "1", "1.5", "+Inf"} {
		out = append(out, rundir.Sample{TimeNs: t, Node: node, Metric: m + "_bucket",
			Labels: `{is_timely="` + timely + `",le="` + le + `"}`, Value: cum[i]})
	}
	return out
}

// Two validators over the window [10, 20]: v0 saw 10 timely proposals
// (0–0.2 s, 0.1 s each) after 5 before the window; v1 saw 2 untimely ones
// (1–1.5 s, 1.2 s each). Hand-computed: 12 proposals, 2 untimely, mean
// (10×0.1 + 2×1.2)/12 = 283.333 ms; p50 is rank 6 of 12 in (0, 0.2]:
// 0.2×6/10 = 120 ms; p99 is rank 11.88 in (1, 1.5]: 1 + 0.5×1.88/2 =
// 1470 ms. Rows after the window and other series do not count.
func TestProposalTimingOf(t *testing.T) {
	var s []rundir.Sample
	s = append(s, histRows("v0", "true", 0, 5, 0.5, [5]float64{0, 5, 5, 5, 5})...)
	s = append(s, histRows("v0", "true", 20, 15, 1.5, [5]float64{0, 15, 15, 15, 15})...)
	s = append(s, histRows("v0", "true", 30, 100, 50, [5]float64{0, 100, 100, 100, 100})...)
	s = append(s, histRows("v1", "false", 5, 0, 0, [5]float64{})...)
	s = append(s, histRows("v1", "false", 20, 2, 2.4, [5]float64{0, 0, 0, 2, 2})...)
	s = append(s, rundir.Sample{TimeNs: 20, Node: "v1", Metric: "cometbft_consensus_height", Value: 9})
	ns := func(string) string { return "cometbft" }
	got := ProposalTimingOf(s, ns, 10, 20)
	want := rundir.ProposalTiming{Nodes: 2, Proposals: 12, Untimely: 2, MeanMs: 283.333, P50Ms: 120, P99Ms: 1470}
	if got == nil || *got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Another namespace's node reads its own series only.
	if got := ProposalTimingOf(s, func(string) string { return "tendermint" }, 10, 20); got != nil {
		t.Errorf("tendermint namespace: %+v, want nil", got)
	}
	// v0.38 and older have no histogram.
	if got := ProposalTimingOf(s[len(s)-1:], ns, 10, 20); got != nil {
		t.Errorf("no histogram: %+v, want nil", got)
	}
}

func TestIncrease(t *testing.T) {
	rows := func(vals ...[2]float64) []*rundir.Sample {
		var out []*rundir.Sample
		for _, v := range vals {
			out = append(out, &rundir.Sample{TimeNs: int64(v[0]), Value: v[1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		rows []*rundir.Sample
		want float64
	}{
		{"baseline before the window", rows([2]float64{5, 4}, [2]float64{12, 6}, [2]float64{18, 9}), 5},
		{"restart counts from zero", rows([2]float64{5, 4}, [2]float64{12, 1}, [2]float64{18, 3}), 3},
		{"first sample inside is the baseline", rows([2]float64{12, 7}, [2]float64{18, 9}), 2},
		{"samples past the window ignored", rows([2]float64{5, 1}, [2]float64{25, 9}), 0},
	} {
		if got := increase(tc.rows, 10, 20); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBucketQuantile(t *testing.T) {
	b := map[float64]float64{-1.5: 0, 0: 2, 0.5: 6, 1: 8, math.Inf(1): 10}
	for _, tc := range []struct{ q, want float64 }{
		{0.1, -0.75}, // rank 1 in (-1.5, 0]: -1.5 + 1.5×1/2
		{0.5, 0.375}, // rank 5 in (0, 0.5]: 0.5×(5−2)/4
		{0.8, 1},     // rank 8: the top of (0.5, 1]
		{0.95, 1},    // in +Inf: the highest finite bound
	} {
		got := bucketQuantile(tc.q, b)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("q %v: %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(bucketQuantile(0.5, map[float64]float64{})) {
		t.Error("no buckets: want NaN")
	}
}
