package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
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
	// Steady: the steady step's rounds, each the two builds' runs back to
	// back, by their judged metrics' values.
	Steady []RecordedRound `json:"steady"`
}

// RecordedRound is one steady round: each build's value of every judged
// metric.
type RecordedRound struct {
	Base map[string]float64 `json:"base"`
	Cand map[string]float64 `json:"cand"`
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
		return nil, fmt.Errorf("%s: %d pairs and %d steady rounds: want at least 2 of each", path, len(r.Pairs), len(r.Steady))
	}
	return &r, nil
}

// Shift is a true change injected into the candidate: Throughput lowers
// its capacity (the saturation step's pairs), Latency raises its steady
// latencies (at the steady load, below saturation, a chain of lower
// capacity still keeps up: its tps and block rate stay).
type Shift struct {
	Throughput float64 `json:"throughput"`
	Latency    float64 `json:"latency"`
}

// SimConfig is the QA profile the simulation plays: the paired rule of
// the saturation step, and the steady step's (Rounds to MaxRounds rounds,
// each metric of FailOn judged by the paired rule at Threshold).
type SimConfig struct {
	Paired            PairedRule
	Steady            PairedRule
	Rounds, MaxRounds int
	FailOn            []Metric
	Trials            int
	Seed              uint64
	// Calibrated: each simulated QA pools its spreads with a calibration
	// record, itself drawn (a bootstrap of the recorded runs, as many as
	// were recorded) so the record's own error is part of the simulation.
	Calibrated bool
	// BetweenSD draws each simulated QA an offset of its candidate's
	// capacity, ln-normal with this spread, shared by all its pairs: the
	// between-QA spread A/A QAs of this machine showed (NoisePrior's
	// BetweenSD). With Calibrated, the judge knows it from BetweenDF A/A
	// QAs, as a calibration record states it.
	BetweenSD float64
	BetweenDF int
	// EarlierQAs: the judge learns the between-QA spread as a machine's
	// record does, from this many earlier simulated A/A QAs of
	// EarlierPairs pairs each (their offsets drawn as BetweenSD says),
	// through BetweenQAs; Ungated keeps its estimate whatever its test
	// says (the rule before 2026-11-29).
	EarlierQAs, EarlierPairs int
	Ungated                  bool
}

// SimResult is the verdicts' frequencies at one shift.
type SimResult struct {
	Shift                  Shift   `json:"shift"`
	Trials                 int     `json:"trials"`
	Pass, Fail, Inconclus  float64 `json:"-"`
	PPass, PFail, PInconcl float64
	// SatFail, SteadyFail: how often each step failed; SatPass,
	// SteadyPass: passed.
	SatFail, SteadyFail float64
	SatPass, SteadyPass float64
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
		var steadyPriors map[string]NoisePrior
		cfg := cfg
		if cfg.Calibrated {
			cfg.Paired.Prior, steadyPriors = drawCalibration(rec, cfg.FailOn, rng)
			if cfg.BetweenSD > 0 {
				cfg.Paired.Prior.BetweenSD, cfg.Paired.Prior.BetweenDF = cfg.BetweenSD, cfg.BetweenDF
			}
			if cfg.EarlierQAs > 0 {
				b := earlierQAs(rec, cfg, rng)
				cfg.Paired.Prior.BetweenSD, cfg.Paired.Prior.BetweenDF = b.SD, cfg.EarlierQAs
				if cfg.Ungated {
					cfg.Paired.Prior.BetweenSD = b.Estimate
				}
			}
		}
		offset := math.Exp(cfg.BetweenSD * rng.NormFloat64())
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
			p.Cand *= truth * offset
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
		steady := simSteady(rec, cfg, sh, steadyPriors, rng)
		res.SatFail += b2f(sat == ResultFail)
		res.SteadyFail += b2f(steady == ResultFail)
		res.SatPass += b2f(sat == ResultPass)
		res.SteadyPass += b2f(steady == ResultPass)
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
	res.SatPass, res.SteadyPass = res.SatPass/n, res.SteadyPass/n
	res.MeanPairs, res.RatioCover = res.MeanPairs/n, res.RatioCover/n
	return res
}

// simSteady plays the steady step: rounds drawn from the recorded ones
// (either way round), the candidate's latencies shifted, a round added
// while a metric is undecided, up to MaxRounds.
func simSteady(rec *Recorded, cfg SimConfig, sh Shift, priors map[string]NoisePrior, rng *rand.Rand) Result {
	var rounds []RecordedRound
	for {
		for len(rounds) < cfg.Rounds {
			rounds = append(rounds, drawRound(rec, rng))
		}
		var js []Judgement
		open := false
		for _, m := range cfg.FailOn {
			r := cfg.Steady
			r.Better = m.Better
			r.Prior = priors[m.Key]
			var ps []Pair
			for _, rd := range rounds {
				c := rd.Cand[m.Key]
				if strings.HasPrefix(m.Key, "latency") {
					c *= 1 + sh.Latency
				}
				ps = append(ps, Pair{Base: rd.Base[m.Key], Cand: c})
			}
			v := r.Decide(ps)
			js = append(js, Judgement{Metric: m.Key, Verdict: v.Outcome})
			if v.Outcome == OutcomeInconclusive {
				open = true
			}
		}
		res, _ := ResultOf(js, nil)
		if !open || len(rounds) >= cfg.MaxRounds {
			return res
		}
		rounds = append(rounds, drawRound(rec, rng))
	}
}

// drawCalibration is a calibration record made from a bootstrap sample of
// the recorded runs: the pairs' spread around their mean (n-1 df) and
// each steady metric's rounds' spread around zero (n df), as
// experiment.Calibrate computes them.
func drawCalibration(rec *Recorded, metrics []Metric, rng *rand.Rand) (NoisePrior, map[string]NoisePrior) {
	var d []float64
	for range rec.Pairs {
		p := rec.Pairs[rng.IntN(len(rec.Pairs))]
		d = append(d, math.Log(p.Cand/p.Base))
	}
	var m, ss float64
	for _, x := range d {
		m += x
	}
	m /= float64(len(d))
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	pairs := NoisePrior{SDLog: math.Sqrt(ss / float64(len(d)-1)), DF: len(d) - 1}
	rounds := make([]RecordedRound, len(rec.Steady))
	for i := range rounds {
		rounds[i] = rec.Steady[rng.IntN(len(rec.Steady))]
	}
	steady := map[string]NoisePrior{}
	for _, mt := range metrics {
		var s2 float64
		n := 0
		for _, rd := range rounds {
			if b, c := rd.Base[mt.Key], rd.Cand[mt.Key]; b > 0 && c > 0 {
				x := math.Log(c / b)
				s2 += x * x
				n++
			}
		}
		if n > 0 {
			steady[mt.Key] = NoisePrior{SDLog: math.Sqrt(s2 / float64(n)), DF: n}
		}
	}
	return pairs, steady
}

// earlierQAs plays cfg.EarlierQAs A/A QAs of cfg.EarlierPairs pairs each,
// each with its own offset, and estimates the between-QA spread from
// them as a calibration record does.
func earlierQAs(rec *Recorded, cfg SimConfig, rng *rand.Rand) Between {
	var means []QAMean
	var ss float64
	df := 0
	for range cfg.EarlierQAs {
		off := cfg.BetweenSD * rng.NormFloat64()
		d := make([]float64, cfg.EarlierPairs)
		m := 0.0
		for i := range d {
			p := rec.Pairs[rng.IntN(len(rec.Pairs))]
			x := math.Log(p.Cand / p.Base)
			if rng.IntN(2) == 1 { // either way round, as Simulate draws
				x = -x
			}
			d[i] = x + off
			m += d[i]
		}
		m /= float64(len(d))
		for _, x := range d {
			ss += (x - m) * (x - m)
		}
		df += len(d) - 1
		means = append(means, QAMean{Mean: m, N: len(d)})
	}
	return BetweenQAs(means, ss/float64(df), df)
}

func drawRound(rec *Recorded, rng *rand.Rand) RecordedRound {
	rd := rec.Steady[rng.IntN(len(rec.Steady))]
	if rng.IntN(2) == 1 {
		rd.Base, rd.Cand = rd.Cand, rd.Base
	}
	return rd
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
	s := "| true shift | P(Pass) | P(Fail) | P(Inconclusive) | saturation Pass / Fail | steady Pass / Fail | mean pairs | ratio interval holds the truth |\n|---|---|---|---|---|---|---|---|\n"
	for _, r := range rs {
		what := "none"
		switch {
		case r.Shift.Throughput > 0:
			what = fmt.Sprintf("throughput −%g %%", 100*r.Shift.Throughput)
		case r.Shift.Latency > 0:
			what = fmt.Sprintf("latency +%g %%", 100*r.Shift.Latency)
		}
		s += fmt.Sprintf("| %s | %.3f | %.3f | %.3f | %.3f / %.3f | %.3f / %.3f | %.1f | %.3f |\n", what, r.PPass, r.PFail, r.PInconcl, r.SatPass, r.SatFail, r.SteadyPass, r.SteadyFail, r.MeanPairs, r.RatioCover)
	}
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
