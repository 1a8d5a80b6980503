package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// JudgeCompare reads every done run's figures and fills in Summary,
// Verdicts, Regressions and ExitCode. Deterministic: the same run
// directories give the same index.
func JudgeCompare(root string, idx *rundir.CompareIndex) error {
	nm, err := figures.For(idx.NodeKind)
	if err != nil {
		return err
	}
	figs := map[string][]*figures.Run{}
	byRepeat := map[string]map[int]*figures.Run{} // per variant, its runs by round
	excluded := map[string][]string{}             // per variant, its testbed-bound runs' reasons
	idx.TestbedBound = nil
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			continue
		}
		f, err := nm.ReadFigures(r.RunPath(root))
		if err != nil {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s): %v: left out", r.Order, r.Variant, err))
			continue
		}
		if tb := f.Results.TestbedBound; len(tb) > 0 {
			// The testbed, not the build, made this run's figures: it is
			// named and left out of the judged values.
			why := strings.Join(tb, "; ")
			idx.TestbedBound = append(idx.TestbedBound, fmt.Sprintf("run %d (%s): %s", r.Order, r.Variant, why))
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s) is testbed-bound, left out of the verdict: %s", r.Order, r.Variant, why))
			excluded[r.Variant] = append(excluded[r.Variant], why)
			continue
		}
		if !f.Results.Valid {
			idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("run %d (%s) is marked invalid: %s", r.Order, r.Variant, strings.Join(f.Results.Invalid, "; ")))
		}
		figs[r.Variant] = append(figs[r.Variant], f)
		if byRepeat[r.Variant] == nil {
			byRepeat[r.Variant] = map[int]*figures.Run{}
		}
		byRepeat[r.Variant][r.Repeat] = f
	}
	idx.Summary, idx.Verdicts, idx.Regressions = nil, nil, nil
	for _, v := range idx.Variants {
		s := rundir.VariantSummary{Variant: v, Runs: len(figs[v]), Values: map[string]float64{}}
		for _, m := range nm.Metrics() {
			if xs := values(figs[v], m.Key); len(xs) > 0 {
				s.Values[m.Key] = round6(mean(xs))
			}
		}
		idx.Summary = append(idx.Summary, s)
	}
	rule := judge.RegressionRule{Threshold: idx.Config.Threshold, Seed: idx.Seed, MinRuns: MinRuns, NonInferiority: idx.Config.NonInferiority}
	var all []judge.Judgement
	for _, v := range idx.Variants {
		if idx.IsBase(v) {
			continue
		}
		vv := rundir.VariantVerdicts{Variant: v, Base: idx.BaseFor(v)}
		for _, m := range nm.Metrics() {
			if len(values(figs[vv.Base], m.Key)) == 0 && len(values(figs[v], m.Key)) == 0 {
				continue // a metric of another workload (ooo_inclusion of a kv load)
			}
			j := judgeMetric(rule, m, nm.Unit(), figs[vv.Base], figs[v])
			if idx.Config.Paired {
				j = judgePaired(m, idx.Config, byRepeat[vv.Base], byRepeat[v])
			}
			vv.Judgements = append(vv.Judgements, j)
			if judge.ExitCode([]judge.Judgement{j}, idx.Config.FailOn, idx.Config.Equivalence) == judge.ExitRegression {
				idx.Regressions = append(idx.Regressions, v+": "+m.Key)
			}
		}
		if why := testbedShort(excluded, figs, vv.Base, v); why != "" {
			for i := range vv.Judgements {
				j := &vv.Judgements[i]
				j.Verdict, j.Reason, j.CILo, j.CIHi, j.RepeatsNeeded = judge.OutcomeInconclusive, why, nil, nil, 0
			}
			idx.Regressions = slices.DeleteFunc(idx.Regressions, func(s string) bool { return strings.HasPrefix(s, v+": ") })
		}
		all = append(all, vv.Judgements...)
		idx.Verdicts = append(idx.Verdicts, vv)
	}
	for _, j := range all {
		if j.Basis == nm.Unit()+"s" {
			idx.Warnings = appendOnce(idx.Warnings, oneRunWarning(nm.Unit()))
			break
		}
	}
	idx.ExitCode = judge.ExitCode(all, idx.Config.FailOn, idx.Config.Equivalence)
	if un := Unmeasured(idx); len(un) > 0 {
		// A build none of whose runs finished was not compared: "no
		// regression" would pass it unseen (CompareResult: Inconclusive).
		idx.Warnings = appendOnce(idx.Warnings, fmt.Sprintf("%s: no finished run, not judged", strings.Join(un, ", ")))
	}
	return nil
}

// Unmeasured are the variants without one finished, readable run (from
// Summary, which JudgeCompare fills); none of a nil index.
func Unmeasured(idx *rundir.CompareIndex) []string {
	if idx == nil {
		return nil
	}
	var out []string
	for _, s := range idx.Summary {
		if s.Runs == 0 {
			out = append(out, s.Variant)
		}
	}
	return out
}

// testbedShort says why base against variant cannot be judged when the
// testbed-bound runs left out leave a side with fewer than
// MinRunsAfterTestbed runs ("" when both sides keep enough).
func testbedShort(excluded map[string][]string, figs map[string][]*figures.Run, base, variant string) string {
	var short []string
	for _, side := range []string{base, variant} {
		if x := excluded[side]; len(x) > 0 && len(figs[side]) < MinRunsAfterTestbed {
			short = append(short, fmt.Sprintf("%s kept %d run(s) after %d testbed-bound (%s)", side, len(figs[side]), len(x), x[0]))
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("testbed-bound: %s; at least %d per side needed", strings.Join(short, "; "), MinRunsAfterTestbed)
}

// TestbedReason is the first judgement's reason that a testbed-bound side
// made inconclusive ("" when none).
func TestbedReason(idx *rundir.CompareIndex) string {
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			if strings.HasPrefix(j.Reason, "testbed-bound: ") {
				return j.Reason
			}
		}
	}
	return ""
}

// oneRunWarning: with one run per side the interval sees no run-to-run
// noise (the A/A figures were measured on CometBFT blocks).
func oneRunWarning(unit string) string {
	if unit == "block" {
		return "one run per side: the intervals cover the noise between blocks of a run, " +
			"not between runs; such a pair of one configuration with itself regressed in 9 of 153 comparisons on the " +
			"development machine (none with 2 or more runs per side): repeat the runs before trusting a regression"
	}
	return fmt.Sprintf("one run per side: the intervals cover the noise between %[1]ss of a run, not between runs "+
		"(for blocks, such a pair of one configuration with itself regressed in 9 of 153 comparisons on the development machine): "+
		"repeat the runs before trusting a regression", unit)
}

// judgeMetric: where the metric has a per-unit form (blocks, messages), a
// two-stage bootstrap (runs, then units within them; units alone for one
// run per side); else over run values, which needs judge's MinRuns per side.
func judgeMetric(rule judge.RegressionRule, m judge.Metric, unit string, base, variant []*figures.Run) judge.Judgement {
	if bn, ok := nestedUnits(base, m.Key); ok {
		if vn, ok := nestedUnits(variant, m.Key); ok {
			r := rule
			r.Resamples = 2000 // each replicate recomputes every drawn run from its units
			basis := "runs+" + unit + "s"
			if bn.N == 1 || vn.N == 1 {
				basis = unit + "s"
			}
			return r.Compare(m, basis, bn, vn)
		}
	}
	return rule.Compare(m, "runs", judge.RunUnits(values(base, m.Key)), judge.RunUnits(values(variant, m.Key)))
}

// nestedUnits gives every run's units (blocks, messages) as its inner
// units; ok is false when a run has none or the metric has no per-unit form.
func nestedUnits(figs []*figures.Run, key string) (judge.Units, bool) {
	var runs []judge.Units
	for _, f := range figs {
		if f.Inner == nil {
			return judge.Units{}, false
		}
		u, ok := f.Inner(key)
		if !ok {
			return judge.Units{}, false
		}
		runs = append(runs, u)
	}
	return judge.NestedUnits(runs), len(runs) > 0
}

func values(figs []*figures.Run, key string) []float64 {
	var xs []float64
	for _, f := range figs {
		if v, ok := f.Values[key]; ok {
			xs = append(xs, v)
		}
	}
	return xs
}

// judgePaired judges a metric over the rounds in which both variants ran
// (a pair each: the two runs of one round, back to back), by the ratio
// variant/base with judge.PairedRule: the rounds' machine states cancel.
// An A/A QA's three steady rounds read a latency avg of 1097/1130,
// 1118/1134 and 1741/1851 ms: the third round ran on a slower machine,
// and the unpaired bootstrap's interval was -35 % to +60 %, where the
// rounds' own ratios agree within 3 % (2026-11-28).
func judgePaired(m judge.Metric, cfg rundir.CompareConfig, base, variant map[int]*figures.Run) judge.Judgement {
	r := judge.DefaultPairedRule()
	r.Threshold, r.Better, r.Prior = cfg.Threshold/100, m.Better, cfg.Priors[m.Key]
	r.MinPairs, r.MaxPairs = PairedMinRounds, max(cfg.MaxRepeats, cfg.Repeats, PairedMinRounds)
	r.Equivalence = cfg.Equivalence
	var rounds []int
	for k := range base {
		if _, ok := variant[k]; ok {
			rounds = append(rounds, k)
		}
	}
	slices.Sort(rounds)
	var ps []judge.Pair
	var bs, vs []float64
	for _, k := range rounds {
		b, bok := base[k].Values[m.Key]
		v, vok := variant[k].Values[m.Key]
		if !bok || !vok {
			continue
		}
		ps = append(ps, judge.Pair{Base: b, Cand: v})
		bs, vs = append(bs, b), append(vs, v)
	}
	pv := r.Decide(ps)
	j := judge.Judgement{Metric: m.Key, Basis: "pairs", NBase: pv.Pairs, NVariant: pv.Pairs, Verdict: pv.Outcome, Reason: pv.Why, RepeatsNeeded: pv.PairsNeeded}
	if len(bs) > 0 {
		j.Base, j.Variant = round6(mean(bs)), round6(mean(vs))
	}
	if pv.Ratio > 0 {
		j.DeltaPct = round6(100 * (pv.Ratio - 1))
	}
	if pv.Lo > 0 && pv.Hi > 0 {
		lo, hi := round6(100*(pv.Lo-1)), round6(100*(pv.Hi-1))
		j.CILo, j.CIHi = &lo, &hi
	}
	return j
}

// PairedMinRounds is the rounds a paired verdict needs: two pairs make a
// t interval (12.7 standard errors wide, so only a large change decides
// there; the QA plans 3 rounds).
const PairedMinRounds = 2

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}
