package judge

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var ocTable = flag.String("octable", "", "write the operating characteristic's Markdown table to FILE")

// quickSim is the quick profile as the QA judges it: 3 to 6 pairs, the
// steady step's 2 runs per side adding up to 3, 10 %.
func quickSim(trials int) SimConfig {
	r := DefaultPairedRule()
	r.MinPairs, r.MaxPairs = 3, 6
	return SimConfig{Paired: r, Repeats: 2, MaxRepeats: 3, Threshold: 10, MinRuns: 3, Resamples: 400, Trials: trials, Seed: 20261128}
}

// TestOperatingCharacteristic resamples the A/A runs recorded on this
// machine (testdata/aa-runs.json: the pairs and steady runs of A/A quick
// QAs, `benchnet calibrate --export`), injects known shifts into the
// candidate and judges each simulated QA with the QA's own rules. It
// fails when an unchanged build fails more than 5 % of the time, is
// inconclusive more than 10 % of the time, or when a 20 % regression in
// throughput or in latency fails less than 90 % of the time.
func TestOperatingCharacteristic(t *testing.T) {
	rec, err := ReadRecorded("testdata/aa-runs.json")
	if err != nil {
		t.Fatal(err)
	}
	trials := 400
	if testing.Short() {
		trials = 100
	}
	cfg := quickSim(trials)
	var rs []SimResult
	for _, s := range []float64{0, 0.05, 0.1, 0.15, 0.2, 0.3} {
		rs = append(rs, Simulate(rec, cfg, Shift{Throughput: s}))
		if s > 0 {
			rs = append(rs, Simulate(rec, cfg, Shift{Latency: s}))
		}
	}
	table := OCTable(rs)
	t.Logf("recorded: %s; %d pairs, %d steady runs\n%s", rec.Source, len(rec.Pairs), len(rec.Steady), table)
	if *ocTable != "" {
		if err := os.WriteFile(*ocTable, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	at := func(th, lat float64) SimResult {
		for _, r := range rs {
			if r.Shift == (Shift{th, lat}) {
				return r
			}
		}
		panic(fmt.Sprint("no shift ", th, lat))
	}
	if r := at(0, 0); r.PFail > 0.05 || r.PInconcl > 0.10 {
		t.Errorf("at no change: P(Fail) %.3f (max 0.05), P(Inconclusive) %.3f (max 0.10)", r.PFail, r.PInconcl)
	}
	for _, r := range []SimResult{at(0.2, 0), at(0, 0.2)} {
		if r.PFail < 0.9 {
			t.Errorf("at %+v: P(Fail) %.3f, want at least 0.9", r.Shift, r.PFail)
		}
	}
}
