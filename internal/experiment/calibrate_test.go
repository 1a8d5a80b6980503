package experiment

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestCalibrate: the pairs' spread is pooled within each QA (a QA's
// shift, the machine's state that day, is not noise of the ratio), its
// degrees of freedom kept; steady rounds' spread is taken around zero
// (A/A); the record reaches the QA as priors; another machine is refused.
func TestCalibrate(t *testing.T) {
	m := &rundir.Machine{CPUModel: "EPYC", CPUs: 2, Kernel: "6.1", MemoryBytes: 24 << 30}
	idx := func() *rundir.QAIndex { return &rundir.QAIndex{Machine: m, Profile: "quick"} }
	// QA 1: log ratios +0.1, -0.1 around 0; QA 2: 0.3, 0.5 around 0.4.
	recs := []*QADirRecord{
		{Dir: "a", Index: idx(), Pairs: []judge.Pair{{Base: 100, Cand: 100 * math.Exp(0.1)}, {Base: 100, Cand: 100 * math.Exp(-0.1)}},
			Steady: []judge.RecordedRound{
				{Base: map[string]float64{"latency_avg": 1000}, Cand: map[string]float64{"latency_avg": 1000 * math.Exp(0.2)}},
				{Base: map[string]float64{"latency_avg": 1000}, Cand: map[string]float64{"latency_avg": 1000 * math.Exp(-0.2)}},
			}},
		{Dir: "b", Index: idx(), Pairs: []judge.Pair{{Base: 100, Cand: 100 * math.Exp(0.3)}, {Base: 100, Cand: 100 * math.Exp(0.5)}}},
	}
	c, err := Calibrate(recs, "dev", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// Within-QA sum of squares 0.02 + 0.02 over 2 df: sd 0.1414 (around
	// the grand mean 0.2 it would be 0.26).
	if c.CapacityPairs != 4 || c.CapacityDF != 2 || math.Abs(c.CapacitySD-math.Sqrt(0.02)) > 1e-6 {
		t.Errorf("capacity: %d pairs, %d df, sd %g; want 4, 2, 0.1414", c.CapacityPairs, c.CapacityDF, c.CapacitySD)
	}
	if len(c.Metrics) != 1 || c.Metrics[0].Key != "latency_avg" || math.Abs(c.Metrics[0].CV-0.2) > 1e-6 || c.Metrics[0].Runs != 2 {
		t.Errorf("steady: %+v", c.Metrics)
	}
	// Both are A/A QAs (one reference): their means 0 and 0.4 would give
	// tau^2 = ((0 - 0.02/2) + (0.16 - 0.02/2)) / 2 = 0.07, but over 2 df
	// of pairs that is within their noise (F = 8 on (2, 2) df, p = 1/9):
	// no offset is kept.
	if c.CapacityBetweenQAs != 2 || c.CapacityBetweenSD != 0 || math.Abs(c.CapacityBetweenEstimate-math.Sqrt(0.07)) > 1e-6 || math.Abs(c.CapacityBetweenP-1.0/9) > 1e-5 {
		t.Errorf("between QAs: %g (estimate %g, p %g) over %d, want 0 (estimate %.4f, p 0.111) over 2", c.CapacityBetweenSD, c.CapacityBetweenEstimate, c.CapacityBetweenP, c.CapacityBetweenQAs, math.Sqrt(0.07))
	}
	// QA 2 at 0.7, 0.9 (mean 0.8): F = 32, p = 1/33; tau^2 = (-0.01 + 0.63) / 2.
	recs[1].Pairs = []judge.Pair{{Base: 100, Cand: 100 * math.Exp(0.7)}, {Base: 100, Cand: 100 * math.Exp(0.9)}}
	if c, err = Calibrate(recs, "dev", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if c.CapacityBetweenQAs != 2 || math.Abs(c.CapacityBetweenSD-math.Sqrt(0.31)) > 1e-6 {
		t.Errorf("between QAs: %g over %d (p %g), want %.4f over 2", c.CapacityBetweenSD, c.CapacityBetweenQAs, c.CapacityBetweenP, math.Sqrt(0.31))
	}
	q := c.ForQA()
	if q.Capacity != (judge.NoisePrior{SDLog: c.CapacitySD, DF: 2, BetweenSD: c.CapacityBetweenSD, BetweenDF: 2}) || q.Steady["latency_avg"] != (judge.NoisePrior{SDLog: 0.2, DF: 2}) {
		t.Errorf("for the QA: %+v", q)
	}
	// QAs of two builds carry no between-QA estimate (their true ratio is
	// not 1), and A/A QAs that agree within their pairs' spread give 0.
	ab := func(d string, ratios ...float64) *QADirRecord {
		x := idx()
		x.Baseline.Ref, x.Candidate.Ref = "cometbft@v0.38.17", "cometbft@v1.0.1"
		r := &QADirRecord{Dir: d, Index: x}
		for _, v := range ratios {
			r.Pairs = append(r.Pairs, judge.Pair{Base: 100, Cand: 100 * math.Exp(v)})
		}
		return r
	}
	if c2, err := Calibrate([]*QADirRecord{ab("x", 0.3, 0.5), ab("y", -0.4, -0.2)}, "dev", time.Now()); err != nil || c2.CapacityBetweenQAs != 0 || c2.ForQA().Capacity.BetweenSD != 0 {
		t.Errorf("two A/B QAs: between %+v, %v", c2, err)
	}
	same := []*QADirRecord{recs[0], {Dir: "c", Index: idx(), Pairs: []judge.Pair{{Base: 100, Cand: 100 * math.Exp(0.12)}, {Base: 100, Cand: 100 * math.Exp(-0.08)}}}}
	if c3, err := Calibrate(same, "dev", time.Now()); err != nil || c3.CapacityBetweenQAs != 2 || c3.CapacityBetweenSD != 0 {
		t.Errorf("two A/A QAs whose means sit within their spread: between %g over %d (%v), want 0 over 2", c3.CapacityBetweenSD, c3.CapacityBetweenQAs, err)
	}
	// Too few pairs: nothing to judge with.
	if (&Calibration{CapacityPairs: 2, CapacitySD: 0.1}).ForQA() != nil {
		t.Error("a record of 2 pairs used")
	}
	// Saved, found by machine, testbed and profile; replaced, not doubled.
	path := filepath.Join(t.TempDir(), "calibration.json")
	c.TestbedHash = "tb"
	for range 2 {
		if err := SaveCalibration(path, c); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := ReadCalibrations(path)
	if err != nil || len(cs) != 1 {
		t.Fatalf("records %d: %v", len(cs), err)
	}
	if FindCalibration(cs, Fingerprint(m, ""), "tb", "quick") == nil || FindCalibration(cs, Fingerprint(m, ""), "tb", "default") != nil ||
		FindCalibration(cs, Fingerprint(m, ""), "other", "quick") != nil {
		t.Error("found by the wrong key")
	}
	// Another machine is refused.
	other := idx()
	other.Machine = &rundir.Machine{CPUModel: "Xeon", CPUs: 2, Kernel: "6.1"}
	recs = append(recs, &QADirRecord{Dir: "c", Index: other})
	if _, err := Calibrate(recs, "dev", time.Now()); err == nil || !strings.Contains(err.Error(), "c ran on another machine") {
		t.Errorf("another machine: %v", err)
	}
}

// TestTestbedHashLayout: qa.json's indented configuration and the plan's
// compact one are one testbed.
func TestTestbedHashLayout(t *testing.T) {
	m := [][]byte{[]byte("name = \"qa\"\n")}
	compact := QuickQA().ConfigJSON()
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, "  ", "  "); err != nil {
		t.Fatal(err)
	}
	if a, b := TestbedHash(m, compact), TestbedHash(m, indented.Bytes()); a != b {
		t.Errorf("compact %s, indented %s", a, b)
	}
	if TestbedHash(m, compact) == TestbedHash(m, DefaultQA().ConfigJSON()) {
		t.Error("two methods, one hash")
	}
}

// The calibration's testbed is the history's: comments, layout, the
// scenario's name and the build do not change it; a testbed setting does.
func TestTestbedHashCanonical(t *testing.T) {
	cfg := QuickQA().ConfigJSON()
	base := "name = \"qa\"\n[node.validator]\ncount = 4\nrelease = \"cometbft@v1.0.1\"\n"
	same := []string{
		"# the QA testbed\nname = \"qa\"\n\n[node.validator]\nrelease = \"cometbft@v0.38.17\"\ncount = 4\n",
		"name = \"other\"\n[node.validator]\ncount = 4\nrelease = \"cometbft@v1.0.1\"\n[load]\nrate = 99\n",
	}
	h := TestbedHash([][]byte{[]byte(base)}, cfg)
	for _, s := range same {
		if g := TestbedHash([][]byte{[]byte(s)}, cfg); g != h {
			t.Errorf("%q: hash %s, want %s (one testbed)", s, g, h)
		}
	}
	other := "name = \"qa\"\n[node.validator]\ncount = 5\nrelease = \"cometbft@v1.0.1\"\n"
	if TestbedHash([][]byte{[]byte(other)}, cfg) == h {
		t.Error("5 validators and 4 validators: one hash")
	}
}
