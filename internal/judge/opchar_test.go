package judge

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var ocTable = flag.String("octable", "", "write the operating characteristic's Markdown table to FILE")

// quickSim is the quick profile as the QA judges it: 3 to 6 pairs, the
// steady step's 3 rounds adding a fourth, 10 %, the QA's fail_on.
func quickSim(trials int) SimConfig {
	r := DefaultPairedRule()
	r.MinPairs, r.MaxPairs = 3, 6
	st := DefaultPairedRule()
	st.MinPairs, st.MaxPairs = 2, 4
	return SimConfig{Paired: r, Steady: st, Rounds: 3, MaxRounds: 4, Trials: trials, Seed: 20261128,
		FailOn: []Metric{{Key: "tps", Better: HigherIsBetter}, {Key: "latency_avg", Better: LowerIsBetter},
			{Key: "latency_p95", Better: LowerIsBetter}, {Key: "blocks_per_min", Better: HigherIsBetter}}}
}

// defaultSim is the default profile as the QA judges it: 3 to 10 pairs,
// the steady step's 3 rounds adding up to 6 (DefaultQA). The recorded
// pairs are the quick profile's 20 s runs, noisier than its 30 s ones: the
// figures are its lower bound.
func defaultSim(trials int) SimConfig {
	c := quickSim(trials)
	c.Paired.MinPairs, c.Paired.MaxPairs = 3, 14
	c.Steady.MaxPairs, c.MaxRounds = 8, 8
	return c
}

// TestOperatingCharacteristic resamples the A/A runs recorded on this
// machine (testdata/aa-runs.json: the pairs and steady rounds of three A/A
// quick QAs, `benchnet calibrate --export`), injects known shifts into the
// candidate and judges each simulated quick QA with the QA's own rules.
// It fails when an unchanged build fails more than 5 % of the time, when
// the verdict does not grow more likely to fail as the shift grows, when a
// 30 % throughput regression fails less than 95 % of the time, or when a
// 20 % latency regression fails less than 90 % of the time; calibrated (the
// QA judging with this machine's record), also when a 20 % throughput
// regression does. Judged alone, the pairs' spread (0.09 with one A/A QA's
// two outlier pairs) finds it 82 % of the time (docs/qa.md). The seed is
// fixed: the figures are exact for this data and code.
func TestOperatingCharacteristic(t *testing.T) {
	rec, trials := recorded(t)
	for _, calibrated := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "calibrated"}[calibrated], func(t *testing.T) {
			cfg := quickSim(trials)
			cfg.Calibrated = calibrated
			rs := checkOC(t, rec, cfg)
			want := []Shift{{Latency: 0.2}}
			if calibrated {
				want = append(want, Shift{Throughput: 0.2})
			}
			for _, sh := range want {
				if r := at(t, rs, sh); r.PFail < 0.9 && !testing.Short() {
					t.Errorf("at %+v: P(Fail) %.3f, want at least 0.9", sh, r.PFail)
				}
			}
		})
	}
}

// TestOperatingCharacteristicABAB is the same simulation on the pairs of
// the method as it runs now (the ABAB order, the busy-span estimator): the
// 39 counted pairs of the 11 A/A quick QAs of 2026-11-29 (spread 0.066 on
// the log scale, against the 12 AB/BA pairs' 0.084). It asserts the
// issue's figures at no change: false Fail at most 5 %, Inconclusive at
// most 10 % calibrated; and Fail at least 90 % at a 20 % regression.
func TestOperatingCharacteristicABAB(t *testing.T) {
	rec, trials := recordedFrom(t, "testdata/aa-runs-abab.json")
	for _, calibrated := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "calibrated"}[calibrated], func(t *testing.T) {
			cfg := quickSim(trials)
			cfg.Calibrated = calibrated
			rs := checkOC(t, rec, cfg)
			if testing.Short() {
				return
			}
			if r := at(t, rs, Shift{}); calibrated && r.PInconcl > 0.10 {
				t.Errorf("at no change, calibrated: P(Inconclusive) %.3f, want at most 0.10", r.PInconcl)
			}
			for _, sh := range []Shift{{Latency: 0.2}, {Throughput: 0.2}} {
				if r := at(t, rs, sh); r.PFail < 0.9 && (calibrated || sh.Latency > 0) {
					t.Errorf("at %+v: P(Fail) %.3f, want at least 0.9", sh, r.PFail)
				}
			}
		})
	}
}

// TestOperatingCharacteristicDefault is TestOperatingCharacteristicABAB's
// simulation under the default profile (up to 10 pairs and 6 steady
// rounds): the budget that finds a 15 % regression. It asserts the issue's
// figures: at no change false Fail at most 5 % and, calibrated,
// Inconclusive at most 10 %; at a 15 % regression of throughput or of
// latency, Fail at least 90 %.
func TestOperatingCharacteristicDefault(t *testing.T) {
	rec, trials := recordedFrom(t, "testdata/aa-runs-abab.json")
	for _, calibrated := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "calibrated"}[calibrated], func(t *testing.T) {
			cfg := defaultSim(trials)
			cfg.Calibrated = calibrated
			rs := checkOC(t, rec, cfg)
			if testing.Short() || !calibrated {
				return
			}
			if r := at(t, rs, Shift{}); r.PInconcl > 0.10 {
				t.Errorf("at no change: P(Inconclusive) %.3f, want at most 0.10", r.PInconcl)
			}
			for _, sh := range []Shift{{Latency: 0.15}, {Throughput: 0.15}} {
				if r := at(t, rs, sh); r.PFail < 0.9 {
					t.Errorf("at %+v: P(Fail) %.3f, want at least 0.9", sh, r.PFail)
				}
			}
		})
	}
}

// TestOperatingCharacteristicBetweenQAs plays the lab A/A QAs showed
// before the pairs alternated strictly (docs/qa.md, "Between QAs"): each
// simulated QA's pairs share an offset of spread 0.06 (the record's
// capacity_between_sd_log of 2026-11-28, from 3 A/A QAs). Judged without
// knowing it, the ratio's 95 % interval holds the true 1 far less often
// than it claims (0.758 of the QAs when measured); judged with it (the
// calibration record's term), the interval holds and the false Fail rate
// stays under 5 %, at the price of Inconclusive verdicts, which the table
// states.
func TestOperatingCharacteristicBetweenQAs(t *testing.T) {
	rec, trials := recorded(t)
	alone := quickSim(trials)
	alone.BetweenSD = 0.06
	unaware := Simulate(rec, alone, Shift{})
	t.Logf("offset 0.06 judged without it: %s", OCTable([]SimResult{unaware}))
	if unaware.RatioCover > 0.9 {
		t.Errorf("an unknown between-QA offset of 0.06: the ratio interval held 1 in %.3f of the QAs, want it below 0.9 (else the offset does not matter and the record's term costs for nothing)", unaware.RatioCover)
	}
	cfg := quickSim(trials)
	cfg.Calibrated, cfg.BetweenSD, cfg.BetweenDF = true, 0.06, 3
	rs := ocRows(t, rec, cfg)
	if r := at(t, rs, Shift{}); r.RatioCover < 0.95 || r.PFail > 0.05 {
		t.Errorf("at no change: P(Fail) %.3f (max 0.05), the ratio interval held 1 in %.3f of the QAs (min 0.95)", r.PFail, r.RatioCover)
	}
	checkMonotone(t, rs)
}

// TestOperatingCharacteristicEstimatedBetween plays the between-QA term
// as a machine learns it: the judge's record estimates it from 2 or 3
// earlier A/A QAs of 3 pairs (the default profile's usual count), with
// and without the test that keeps it only when the QAs' means are
// farther from 0 than their pairs' noise explains (BetweenQAs). Without
// the test, an estimate from 2 QAs with no true offset was positive 4 times
// in 10 and then made the next A/A QA undecidable; the test asserts that
// with it, at no true offset, the next A/A default QA is Inconclusive at
// most 10 % of the time, and that at a true offset of 0.06 the false Fail
// rate stays at most 5 %. The table (-v) gives the coverage each pays.
func TestOperatingCharacteristicEstimatedBetween(t *testing.T) {
	rec, trials := recordedFrom(t, "testdata/aa-runs-abab.json")
	var rows []string
	for _, tau := range []float64{0, 0.06} {
		for _, earlier := range []int{2, 3} {
			for _, ungated := range []bool{true, false} {
				cfg := defaultSim(trials)
				cfg.Calibrated, cfg.EarlierQAs, cfg.EarlierPairs, cfg.Ungated, cfg.BetweenSD = true, earlier, 3, ungated, tau
				none, worse := Simulate(rec, cfg, Shift{}), Simulate(rec, cfg, Shift{Throughput: 0.2})
				rule := map[bool]string{true: "kept whenever positive (before)", false: "kept when the test finds it (p < 0.05)"}[ungated]
				rows = append(rows, fmt.Sprintf("| %.2f | %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f |", tau, earlier, rule, none.PPass, none.PFail, none.PInconcl, none.RatioCover, worse.PFail))
				if ungated {
					continue
				}
				if tau == 0 && none.PInconcl > 0.10 && !testing.Short() {
					t.Errorf("no offset, %d earlier QAs: P(Inconclusive) %.3f, want at most 0.10", earlier, none.PInconcl)
				}
				if none.PFail > 0.05 {
					t.Errorf("offset %.2f, %d earlier QAs: P(Fail) %.3f at no change, want at most 0.05", tau, earlier, none.PFail)
				}
			}
		}
	}
	t.Logf("the next A/A default QA, judged with a record of earlier A/A QAs:\n| true between-QA spread | earlier A/A QAs | between-QA term | P(Pass) | P(Fail) | P(Inconclusive) | ratio interval holds 1 | P(Fail) at -20 %% |\n|---|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// recorded is the A/A data the simulations resample, and how many QAs
// each simulates (fewer with -short).
func recorded(t *testing.T) (*Recorded, int) { return recordedFrom(t, "testdata/aa-runs.json") }

// recordedFrom is recorded's data from another file.
func recordedFrom(t *testing.T, path string) (*Recorded, int) {
	t.Helper()
	rec, err := ReadRecorded(path)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		return rec, 500
	}
	return rec, 2000
}

// at is the result at shift sh.
func at(t *testing.T, rs []SimResult, sh Shift) SimResult {
	t.Helper()
	for _, r := range rs {
		if r.Shift == sh {
			return r
		}
	}
	t.Fatalf("no shift %+v", sh)
	return SimResult{}
}

// checkOC simulates cfg at the shifts and checks the table's shape.
func checkOC(t *testing.T, rec *Recorded, cfg SimConfig) []SimResult {
	rs := ocRows(t, rec, cfg)
	if r := at(t, rs, Shift{}); r.PFail > 0.05 {
		t.Errorf("at no change: P(Fail) %.3f (max 0.05)", r.PFail)
	}
	checkMonotone(t, rs)
	if r := at(t, rs, Shift{Throughput: 0.3}); r.PFail < 0.95 {
		t.Errorf("at a 30 %% throughput regression: P(Fail) %.3f, want at least 0.95", r.PFail)
	}
	return rs
}

// ocRows simulates cfg at no change and at each shift of throughput and
// latency, logs the table and writes it with -octable.
func ocRows(t *testing.T, rec *Recorded, cfg SimConfig) []SimResult {
	t.Helper()
	var rs []SimResult
	for _, s := range []float64{0, 0.05, 0.1, 0.15, 0.2, 0.3} {
		rs = append(rs, Simulate(rec, cfg, Shift{Throughput: s}))
		if s > 0 {
			rs = append(rs, Simulate(rec, cfg, Shift{Latency: s}))
		}
	}
	table := OCTable(rs)
	t.Logf("recorded: %s; %d pairs, %d steady rounds\n%s", rec.Source, len(rec.Pairs), len(rec.Steady), table)
	if *ocTable != "" {
		if err := os.WriteFile(*ocTable+"."+strings.ReplaceAll(t.Name(), "/", "-"), []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rs
}

// checkMonotone: P(Fail) grows with the shift (within the simulation's
// error).
func checkMonotone(t *testing.T, rs []SimResult) {
	t.Helper()
	for _, fam := range []func(s float64) Shift{func(s float64) Shift { return Shift{Throughput: s} }, func(s float64) Shift { return Shift{Latency: s} }} {
		prev := -1.0
		for _, s := range []float64{0.1, 0.15, 0.2, 0.3} {
			sh := fam(s)
			r := at(t, rs, sh)
			if r.PFail+0.02 < prev {
				t.Errorf("at %+v: P(Fail) %.3f below the smaller shift's %.3f", sh, r.PFail, prev)
			}
			prev = r.PFail
		}
	}
}
