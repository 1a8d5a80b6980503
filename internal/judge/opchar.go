package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
)

// The operating characteristic of the QA's verdict: how often it Passes,
// Fails or stays Inconclusive against a known true change, measured by
// resampling recorded A/A runs of this machine (Recorded) with a shift
// injected into the candidate's side, and judged by the same rules the QA
// judges with (PairedRule for the saturation step, RegressionRule with
// non-inferiority over the runs' blocks for the steady step).

// Recorded is the A/A data a simulation resamples: the saturation step's
// pairs and the steady step's runs, each given by its blocks.
type Recorded struct {
	// Source says where the runs come from (machine, builds, QAs).
	Source string `json:"source"`
	// Pairs: the committed tx/s of both builds' runs at the overload rate.
	Pairs []Pair `json:"pairs"`
	// Steady: the steady step's runs (either build: under A/A they are
	// one population).
	Steady []RecordedRun `json:"steady"`
}

// RecordedRun is one run by its blocks: [run txs, seconds to the next
// block, sum of the txs' latencies in ms].
type RecordedRun struct {
	Build  string       `json:"build"`
	Blocks [][3]float64 `json:"blocks"`
}

// ReadRecorded reads a Recorded file.
func ReadRecorded(path string) (*Recorded, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recorded
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Pairs) < 2 || len(r.Steady) < 2 {
		return nil, fmt.Errorf("%s: %d pairs and %d steady runs: want at least 2 of each", path, len(r.Pairs), len(r.Steady))
	}
	return &r, nil
}

// Shift is a true change injected into the candidate: Throughput lowers
// its capacity and its steady block rate by that fraction, Latency raises
// its steady latencies by it.
type Shift struct {
	Throughput float64 `json:"throughput"`
	Latency    float64 `json:"latency"`
}

// SimConfig is the QA profile the simulation plays.
type SimConfig struct {
	Paired PairedRule
	// Steady: Repeats runs per side, adding one per side while a metric
	// is undecided, up to MaxRepeats; Threshold in percent.
	Repeats, MaxRepeats int
	Threshold           float64
	MinRuns             int
	Resamples           int
	Trials              int
	Seed                uint64
}

// SimResult is the verdicts' frequencies at one shift.
type SimResult struct {
	Shift                  Shift   `json:"shift"`
	Trials                 int     `json:"trials"`
	Pass, Fail, Inconclus  float64 `json:"-"`
	PPass, PFail, PInconcl float64
	// SatFail, SteadyFail: how often each step failed.
	SatFail, SteadyFail float64
	// MeanPairs: pairs the saturation step ran on average; RatioCover
	// how often its interval held the true ratio.
	MeanPairs, RatioCover float64
}

// Simulate plays cfg.Trials QAs against the shift.
func Simulate(rec *Recorded, cfg SimConfig, sh Shift) SimResult {
	rng := rand.New(rand.NewPCG(cfg.Seed, math.Float64bits(sh.Throughput)^math.Float64bits(sh.Latency)<<1))
	res := SimResult{Shift: sh, Trials: cfg.Trials}
	truth := 1 - sh.Throughput
	for t := 0; t < cfg.Trials; t++ {
		// Step 1: pairs drawn from the recorded ones (either way round,
		// a recorded pair keeps the machine's state of its moment).
		var ps []Pair
		var v PairedVerdict
		for {
			v = cfg.Paired.Decide(ps)
			if v.Decided || len(ps) >= cfg.Paired.MaxPairs {
				break
			}
			p := rec.Pairs[rng.IntN(len(rec.Pairs))]
			if rng.IntN(2) == 1 {
				p.Base, p.Cand = p.Cand, p.Base
			}
			p.Cand *= truth
			ps = append(ps, p)
		}
		res.MeanPairs += float64(len(ps))
		if v.Lo > 0 && v.Lo <= truth && truth <= v.Hi {
			res.RatioCover++
		}
		sat := OutcomeResult(v.Outcome)
		if !v.Decided && v.Outcome == OutcomeInconclusive {
			sat = ResultInconclusive
		}
		// Step 2: the steady compare, adaptive.
		steady := simSteady(rec, cfg, sh, rng)
		if sat == ResultFail {
			res.SatFail++
		}
		if steady == ResultFail {
			res.SteadyFail++
		}
		switch Worst(sat, steady) {
		case ResultPass:
			res.Pass++
		case ResultFail:
			res.Fail++
		default:
			res.Inconclus++
		}
	}
	n := float64(cfg.Trials)
	res.PPass, res.PFail, res.PInconcl = res.Pass/n, res.Fail/n, res.Inconclus/n
	res.SatFail, res.SteadyFail = res.SatFail/n, res.SteadyFail/n
	res.MeanPairs, res.RatioCover = res.MeanPairs/n, res.RatioCover/n
	return res
}

// simMetrics are the steady metrics the simulation judges, by their
// per-block statistics.
var simMetrics = []struct {
	m    Metric
	stat func(blocks [][3]float64, idx []int) float64
}{
	{Metric{Key: "tps", Better: HigherIsBetter}, func(b [][3]float64, idx []int) float64 {
		var txs, sec float64
		for _, i := range idx {
			txs, sec = txs+b[i][0], sec+b[i][1]
		}
		return txs / sec
	}},
	{Metric{Key: "blocks_per_min", Better: HigherIsBetter}, func(b [][3]float64, idx []int) float64 {
		var sec float64
		for _, i := range idx {
			sec += b[i][1]
		}
		return 60 * float64(len(idx)) / sec
	}},
	{Metric{Key: "latency_avg", Better: LowerIsBetter}, func(b [][3]float64, idx []int) float64 {
		var txs, lat float64
		for _, i := range idx {
			txs, lat = txs+b[i][0], lat+b[i][2]
		}
		if txs == 0 {
			return math.NaN()
		}
		return lat / txs
	}},
}

func simSteady(rec *Recorded, cfg SimConfig, sh Shift, rng *rand.Rand) Result {
	draw := func(shifted bool) [][3]float64 {
		src := rec.Steady[rng.IntN(len(rec.Steady))].Blocks
		if !shifted {
			return src
		}
		out := make([][3]float64, len(src))
		for i, b := range src {
			// At the steady load (below saturation) a chain of lower
			// capacity still keeps up: only the latencies are shifted here;
			// a throughput shift is the saturation step's to find.
			out[i] = [3]float64{b[0], b[1], b[2] * (1 + sh.Latency)}
		}
		return out
	}
	var base, cand [][][3]float64
	rule := RegressionRule{Threshold: cfg.Threshold, Seed: rng.Uint64(), MinRuns: cfg.MinRuns, NonInferiority: true, Resamples: cfg.Resamples}
	for n := 0; ; n++ {
		for len(base) < max(cfg.Repeats, n+1) {
			base, cand = append(base, draw(false)), append(cand, draw(true))
		}
		var js []Judgement
		for _, sm := range simMetrics {
			side := func(runs [][][3]float64) Units {
				var us []Units
				for _, r := range runs {
					us = append(us, Units{N: len(r), Stat: func(idx []int) float64 { return sm.stat(r, idx) }})
				}
				return NestedUnits(us)
			}
			js = append(js, rule.Compare(sm.m, "runs+blocks", side(base), side(cand)))
		}
		res, _ := ResultOf(js, nil)
		if res != ResultInconclusive || len(base) >= cfg.MaxRepeats {
			return res
		}
	}
}

// OCTable formats results as a Markdown table.
func OCTable(rs []SimResult) string {
	rs = slices.Clone(rs)
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Shift.Latency != rs[j].Shift.Latency {
			return rs[i].Shift.Latency < rs[j].Shift.Latency
		}
		return rs[i].Shift.Throughput < rs[j].Shift.Throughput
	})
	s := "| true shift | P(Pass) | P(Fail) | P(Inconclusive) | saturation Fail | steady Fail | mean pairs | ratio interval holds the truth |\n|---|---|---|---|---|---|---|---|\n"
	for _, r := range rs {
		what := "none"
		switch {
		case r.Shift.Throughput > 0:
			what = fmt.Sprintf("throughput −%g %%", 100*r.Shift.Throughput)
		case r.Shift.Latency > 0:
			what = fmt.Sprintf("latency +%g %%", 100*r.Shift.Latency)
		}
		s += fmt.Sprintf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f | %.3f |\n", what, r.PPass, r.PFail, r.PInconcl, r.SatFail, r.SteadyFail, r.MeanPairs, r.RatioCover)
	}
	return s
}
