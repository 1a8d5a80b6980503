package judge

import (
	"slices"
	"strings"
	"testing"
)

func TestEvalThresholds(t *testing.T) {
	cond := func(key, text string) Condition {
		t.Helper()
		c, err := ParseCondition("cometbft", key, text)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	conds := []Condition{
		cond("latency_p99", "< 2s"),     // 1500 ms: pass
		cond("tps", "> 180"),            // 150: fail
		cond("inclusion", "== 1"),       // 100 %: pass
		cond("committed", ">= 99.9%"),   // 99.8: fail
		cond("halted", "== false"),      // 0: pass
		cond("caught_up", "== true"),    // absent: not measured
		cond("latency_avg", "<= 850ms"), // exactly 850: pass
		cond("blocks_per_min", "!= 60"), // 60: fail
		cond("lost", ">= 0"),            // 0: pass
		cond("peak_mempool", "> 0"),     // 0: fail
	}
	vals := map[string]float64{"latency_p99": 1500, "tps": 150, "inclusion": 100, "committed": 99.8, "halted": 0,
		"latency_avg": 850, "blocks_per_min": 60, "lost": 0, "peak_mempool": 0}
	rs := EvalThresholds(conds, vals)
	var got []string
	for _, r := range rs {
		got = append(got, r.Outcome)
	}
	want := []string{"pass", "fail", "pass", "fail", "pass", "not measured", "pass", "fail", "pass", "fail"}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes %q, want %q", got, want)
	}
	failed := ThresholdsFailed(rs, "cometbft")
	wantF := []string{"tps > 180: was 150 tx/s", "committed >= 99.9%: was 99.8%", "caught_up == true: not measured", "blocks_per_min != 60: was 60 1/min", "peak_mempool > 0: was 0 txs"}
	if !slices.Equal(failed, wantF) {
		t.Errorf("failed %q\nwant %q", failed, wantF)
	}
	if ThresholdsFailed(EvalThresholds(conds[:1], vals), "cometbft") != nil {
		t.Error("a passing set reports failures")
	}
}

func TestParseConditionUnits(t *testing.T) {
	for _, tc := range []struct {
		kind, key, text string
		want            float64
		err             string
	}{
		{"cometbft", "latency_p95", "< 850ms", 850, ""},
		{"cometbft", "latency_p95", "<1.5s", 1500, ""},
		{"gossipsub", "mdr", ">= 0.999", 99.9, ""},
		{"gossipsub", "mdr", ">= 99.9%", 99.9, ""},
		{"gossipsub", "dissemination_p50", "< 1", 0, "is a time"},
		{"cometbft", "halted", "!= true", 1, ""},
		{"cometbft", "cpu_per_tx", "< 2ms", 2, ""},
		{"", "tps", "> 1e3", 1000, ""},
		{"cometbft", "tps", "> NaN", 0, "plain number"},
		{"cometbft", "tps", "~ 3", 0, "want an operator"},
	} {
		c, err := ParseCondition(tc.kind, tc.key, tc.text)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %q: error %v, want one with %q", tc.key, tc.text, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s %q: %v", tc.key, tc.text, err)
		case tc.err == "" && c.Value != tc.want:
			t.Errorf("%s %q: value %v, want %v", tc.key, tc.text, c.Value, tc.want)
		}
	}
}

// A kind registered from outside judge (a third node kind's package) gets
// its judged and threshold-only metrics, and only those.
func TestRegisterKindThresholds(t *testing.T) {
	RegisterKind("third-kind", KindMetrics{
		Judged:        []Metric{{Key: "frames_per_s", Name: "frames/s", Unit: "frames/s", Better: HigherIsBetter}},
		ThresholdOnly: []Metric{{Key: "halted", Name: "halted", Unit: "bool", Better: LowerIsBetter}},
	})
	t.Cleanup(func() { kinds.Unregister("third-kind") })
	if ms, ok := MetricsOf("third-kind"); !ok || len(ms) != 1 || ms[0].Key != "frames_per_s" {
		t.Errorf("MetricsOf(third-kind) = %v, %v", ms, ok)
	}
	if _, err := ParseCondition("third-kind", "halted", "== 0"); err != nil {
		t.Errorf("threshold-only key of the kind: %v", err)
	}
	if _, err := ParseCondition("third-kind", "tps", "> 1"); err == nil || !strings.Contains(err.Error(), "unknown metric for third-kind nodes") {
		t.Errorf("another kind's metric: %v", err)
	}
	if _, ok := MetricsOf("fourth-kind"); ok {
		t.Error("an unregistered kind has metrics")
	}
}
