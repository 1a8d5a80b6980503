package manifest

import (
	"slices"
	"testing"
)

const thrBase = `name = "t"
[node.validator]
count = 4
[load]
rate = 10
duration = "10s"
[thresholds]
`

const thrGossipBase = `name = "g"
[network]
topology = "line"
[node.gossip]
count = 3
kind = "gossipsub"
[thresholds]
`

func TestThresholdValidation(t *testing.T) {
	for _, tc := range []struct {
		name, base, extra string
		want              []string // substrings of the error, each with file:line and field
	}{
		{"ok chain", thrBase, "latency_p99 = \"< 2s\"\ntps = \"> 180\"\ninclusion = \"== 1\"\ncommitted = \">= 99.5%\"\nlost = \"== 0\"\nhalted = \"== false\"\ncaught_up = \"== true\"\nlatency_avg = \"<= 850ms\"\nblocks_per_min=\"!=0\"\n", nil},
		{"ok gossip", thrGossipBase, "mdr = \">= 0.999\"\ndissemination_p99 = \"< 300ms\"\nhalted = \"== 0\"\n", nil},
		{"unknown metric", thrBase, "tpss = \"> 1\"\n", []string{`m.toml:8: thresholds.tpss: unknown metric for cometbft nodes: want one of tps,`}},
		{"gossip metric on chain", thrBase, "tps = \"> 1\"\nmdr = \">= 0.9\"\n", []string{`m.toml:9: thresholds.mdr: unknown metric for cometbft nodes`}},
		{"chain metric on gossip", thrGossipBase, "tps = \"> 1\"\n", []string{`m.toml:8: thresholds.tps: unknown metric for gossipsub nodes`}},
		{"no operator", thrBase, "tps = \"180\"\n", []string{`m.toml:8: thresholds.tps: "180": want an operator`}},
		{"bad operator", thrBase, "tps = \"=> 180\"\n", []string{`m.toml:8: thresholds.tps: "=> 180": want an operator`}},
		{"no value", thrBase, "tps = \">=\"\n", []string{`m.toml:8: thresholds.tps: ">=": no value after ">="`}},
		{"time without unit", thrBase, "latency_p99 = \"< 2\"\n", []string{`m.toml:8: thresholds.latency_p99: "< 2": latency_p99 is a time: want a duration`}},
		{"duration for a rate", thrBase, "tps = \"> 2s\"\n", []string{`thresholds.tps: "> 2s": tps is in tx/s, not a time`}},
		{"share above one", thrBase, "inclusion = \">= 99.9\"\n", []string{`m.toml:8: thresholds.inclusion: ">= 99.9": inclusion is a share: a plain number is a fraction (0 to 1); write 99.9% for a percentage`}},
		{"share above 100%", thrBase, "inclusion = \">= 120%\"\n", []string{`thresholds.inclusion: ">= 120%": a share is between 0 and 100%`}},
		{"outcome with <", thrBase, "halted = \"< 1\"\n", []string{`m.toml:8: thresholds.halted: "< 1": halted is an outcome (true/false): use == or !=`}},
		{"outcome not bool", thrBase, "caught_up = \"== yes\"\n", []string{`thresholds.caught_up: "== yes": caught_up is an outcome: want true or false`}},
		{"negative", thrBase, "lost = \">= -1\"\n", []string{`thresholds.lost: ">= -1": lost cannot be negative`}},
		{"not a string", thrBase, "tps = 180\n", []string{`m.toml:8: thresholds.tps`}},
		{"two at once", thrBase, "tps = \"> x\"\nlatency_p99 = \"< 2\"\n", []string{`m.toml:8: thresholds.tps`, `m.toml:9: thresholds.latency_p99`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.base+tc.extra, tc.want) })
	}
}

// The parsed conditions come in file order, with values in the metric's unit.
func TestThresholdConditions(t *testing.T) {
	m, err := Parse("m.toml", []byte(thrBase+"tps = \"> 180\"\nlatency_p99 = \"< 2s\"\ninclusion = \"== 1\"\ncommitted = \">= 99.5%\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var vals []float64
	for _, c := range m.ThresholdConditions() {
		got = append(got, c.Metric+" "+c.Text)
		vals = append(vals, c.Value)
	}
	want := []string{"tps > 180", "latency_p99 < 2s", "inclusion == 1", "committed >= 99.5%"}
	if !slices.Equal(got, want) {
		t.Errorf("conditions %q, want %q", got, want)
	}
	if wantV := []float64{180, 2000, 100, 99.5}; !slices.Equal(vals, wantV) {
		t.Errorf("values %v, want %v", vals, wantV)
	}
}
