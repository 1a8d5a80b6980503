package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// PairedStep is the QA step that decides the saturation question from
// paired runs (judge.PairedRule).
const PairedStep = "saturation-paired"

// BrokenRun starts the reason of a paired run whose chain committed
// nothing.
const BrokenRun = "broken run"

// measureFunc runs one manifest and returns its run directory.
type measureFunc func(ctx context.Context, m *manifest.Manifest, root string) (string, error)

// runPairs runs pairs of the two builds at the overload rate (their
// committed txs over the busy span, BusyThroughput), in the configured
// order (PairOrder), until the paired rule decides, MaxPairs is reached or
// the step's deadline would be passed. Each pair is recorded in qa.json as
// it finishes, so a resumed QA goes on from the last one.
func runPairs(ctx context.Context, x *rundir.QAIndex, o qaOptions, s *rundir.QAStep, measure measureFunc, save func() error) (string, error) {
	q := o.Config
	sat := x.Saturation
	if sat == nil || sat.OverloadRate <= 0 {
		return "", errors.New("no overload rate: the baseline's saturation search found no rate")
	}
	dir := filepath.Join(o.Root, rundir.QAStepsDir, PairedStep)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rule := q.PairedRule()
	if x.Calibration != nil {
		rule.Prior = x.Calibration.Capacity
	}
	refs := map[string]string{rundir.QABaseline: x.Baseline.Ref, rundir.QACandidate: x.Candidate.Ref}
	deadline := stepDeadline(x, s.Name, o.Deadline)
	var pairWall time.Duration
	for {
		v := rule.Decide(sat.JudgePairs())
		sat.Paired = &v
		sat.Verdict, sat.Why = v.Outcome, v.Why
		if v.Decided {
			break
		}
		if len(sat.Pairs) >= rule.MinPairs && !deadline.IsZero() && pairWall > 0 && o.Now().Add(pairWall).After(deadline) {
			sat.Why += fmt.Sprintf("; stopped by the budget after %d pairs (another pair, ~%s, would end past the step's deadline)", len(sat.Pairs), pairWall.Round(time.Second))
			break
		}
		if err := ctx.Err(); err != nil {
			return dir, context.Cause(ctx)
		}
		start := o.Now()
		p := rundir.QAPair{First: pairFirst(q.PairOrder, len(sat.Pairs))}
		order := []string{rundir.QABaseline, rundir.QACandidate}
		if p.First == rundir.QACandidate {
			order = []string{rundir.QACandidate, rundir.QABaseline}
		}
		fmt.Fprintf(o.Log, "qa: pair %d at %g tx/s per connection (%s first)\n", len(sat.Pairs)+1, sat.OverloadRate, p.First)
		for _, b := range order {
			m, err := pairManifest(o.Manifest, q, b, refs[b], sat.Connections, sat.OverloadRate)
			if err != nil {
				return dir, err
			}
			rdir, err := measure(ctx, m, dir)
			if ctx.Err() != nil {
				return dir, context.Cause(ctx)
			}
			tps, excl := pairValue(rdir, err, sat.Connections, sat.OverloadRate)
			rel := RelTo(o.Root, rdir)
			if b == rundir.QABaseline {
				p.BaseTPS, p.BaseDir, p.BaseExcluded = tps, rel, excl
			} else {
				p.CandTPS, p.CandDir, p.CandExcluded = tps, rel, excl
			}
		}
		p.Rate = sat.OverloadRate
		sat.Pairs = append(sat.Pairs, p)
		s.Runs = 2 * len(sat.Pairs)
		if raiseOverload(sat, q, o.Log) {
			pairWall = max(pairWall, o.Now().Sub(start))
			if err := save(); err != nil {
				return dir, err
			}
			continue
		}
		if why, ok := candidateCannotRunPairs(sat.Pairs); ok {
			sat.Verdict, sat.Why = judge.OutcomeRegression, why
			sat.Paired.Outcome, sat.Paired.Why, sat.Paired.Decided = judge.OutcomeRegression, why, true
			return dir, save()
		}
		pairWall = max(pairWall, o.Now().Sub(start))
		if err := save(); err != nil {
			return dir, err
		}
	}
	if n := len(sat.Pairs); n > 0 && sat.Paired.Excluded == n {
		return dir, fmt.Errorf("every pair was excluded: %s", sat.Pairs[n-1].Excluded())
	}
	steadyFromPairs(sat, q.Margin)
	return dir, save()
}

// steadyFromPairs lowers the steady load to the margin below the
// baseline's throughput under overload when that is below its highest
// sustainable rate: a 10 s probe's rate can be "sustainable" only because
// the mempool (5000 txs) absorbed the excess (the quick search found
// 800 tx/s sustainable; 20 s at 0.8 x 800 = 640 then saturated the chain,
// whose pairs committed 640-780 tx/s).
func steadyFromPairs(sat *rundir.QASaturation, margin float64) {
	var logs []float64
	for _, p := range sat.Pairs {
		if p.BaseExcluded == "" && p.BaseTPS > 0 {
			logs = append(logs, math.Log(p.BaseTPS))
		}
	}
	if len(logs) == 0 || sat.Connections < 1 {
		return
	}
	capacity := math.Exp(mean(logs)) / float64(sat.Connections)
	if capacity < sat.Baseline.Lo {
		sat.Rate = math.Floor(capacity * (1 - margin))
		sat.RateFrom = fmt.Sprintf("the baseline's throughput under overload, %.1f tx/s per connection (geometric mean of %d paired runs), below its highest sustainable rate %g, backed off by %g %%", capacity, len(logs), sat.Baseline.Lo, 100*margin)
	}
}

// keptUp: a baseline run that committed this much of the offered rate
// was not overloaded (the busy span's throughput of a chain that keeps up
// reads the offered rate, within its pacing and block timing).
const keptUp = 0.97

// maxRaises bounds how often the overload rate is raised.
const maxRaises = 3

// raiseOverload checks the first counted pair at a rate: when its
// baseline run kept up with the overload rate, it measured the offered
// rate, not a capacity (a quick search can end far below the saturation: 1056 tx/s
// sustainable, 3000 saturated, and the pairs at 1267 committed ~1280,
// 2026-11-28), and a regression smaller than that gap would pass unseen.
// That pair is marked and no longer counts, and the rate goes up by half
// (at most maxRaises times, not past max_rate); true when it was raised.
func raiseOverload(sat *rundir.QASaturation, q *QA, log io.Writer) bool {
	last := &sat.Pairs[len(sat.Pairs)-1]
	offered := sat.OverloadRate * float64(sat.Connections)
	if last.BaseExcluded != "" || !(last.BaseTPS >= keptUp*offered) {
		return false
	}
	// Only the first pair at a rate tests it: a later one that keeps up
	// is a rate at the capacity, which masks nothing (a worse candidate
	// still commits less than the rate), and raising there threw away
	// the pairs before it (4 of an A/A QA's 6, 2026-11-28).
	at := 0
	for _, p := range sat.Pairs {
		if p.Rate == sat.OverloadRate && p.BaseExcluded == "" {
			at++
		}
	}
	if at > 1 {
		return false
	}
	raised := map[float64]bool{} // the rates left behind
	for _, p := range sat.Pairs {
		if p.Below != "" {
			raised[p.Rate] = true
		}
	}
	raises := len(raised)
	rate := math.Round(sat.OverloadRate * 1.5)
	if q.MaxRate > 0 {
		rate = min(rate, q.MaxRate)
	}
	if raises >= maxRaises || rate <= sat.OverloadRate {
		return false
	}
	why := fmt.Sprintf("below capacity: at %g tx/s per connection the baseline committed %.0f of %.0f tx/s offered", sat.OverloadRate, last.BaseTPS, offered)
	for i := range sat.Pairs {
		if sat.Pairs[i].Rate == sat.OverloadRate && sat.Pairs[i].Below == "" {
			sat.Pairs[i].Below = why
		}
	}
	fmt.Fprintf(log, "qa: %s: not an overload; the pairs go on at %g tx/s per connection\n", why, rate)
	sat.OverloadRate = rate
	return true
}

// candidateCannotRunPairs is the compare's rule for a build that cannot
// run where the other can, over pairs: at least two pairs, in every one
// the candidate's run failed or committed nothing while the baseline's
// counted.
func candidateCannotRunPairs(ps []rundir.QAPair) (string, bool) {
	if len(ps) < 2 {
		return "", false
	}
	for _, p := range ps {
		if !p.CandidateBroken() {
			return "", false
		}
	}
	return fmt.Sprintf("the candidate cannot run at the overload rate: in all %d pairs its run did not count (%s) where the baseline's did", len(ps), ps[0].CandExcluded), true
}

// pairManifest is the testbed on build b at the overload rate.
func pairManifest(m *manifest.Manifest, q *QA, build, ref string, connections int, rate float64) (*manifest.Manifest, error) {
	bm, err := BuildManifest(m, build, ref)
	if err != nil {
		return nil, err
	}
	bm.Load.Connections, bm.Load.Rate = connections, rate
	bm.Load.Duration, bm.Load.Count = q.PairDuration, 0
	bm.Load.Shape, bm.Load.RampFrom = "constant", 0
	return bm, nil
}

// pairValue is a paired run's committed tx/s, or why it cannot count: the
// run failed, its generator or the machine bound it (Figures' invalid
// load), or the chain committed nothing (a broken run, not a capacity).
func pairValue(dir string, runErr error, connections int, rate float64) (float64, string) {
	if runErr != nil {
		return 0, "run failed: " + runErr.Error()
	}
	if dir == "" {
		return 0, "no run directory"
	}
	res, err := (&rundir.Dir{Path: dir}).ReadResults()
	if err != nil {
		return 0, "no results: " + err.Error()
	}
	cell, _ := Figures(res, connections, rate)
	switch {
	case cell.Sent > 0 && cell.Committed == 0:
		// The build's own failure when its pair's other run counted
		// (QAPair.CandidateBroken), the testbed's when both broke.
		return 0, fmt.Sprintf("%s: committed none of %d sent txs", BrokenRun, cell.Sent)
	case len(cell.Testbed) > 0:
		return cell.TPS, rundir.TestbedBoundPrefix + ": " + strings.Join(append(slices.Clone(cell.LoadInvalid), cell.Testbed...), "; ")
	}
	d := &rundir.Dir{Path: dir}
	ls, err := d.ReadLoad()
	if err != nil {
		return 0, fmt.Sprintf("%s: no load.json: %v", BrokenRun, err)
	}
	tput, err := BusyThroughput(d, ls, cell.Committed)
	if err != nil || !(tput > 0) || math.IsInf(tput, 0) {
		return 0, fmt.Sprintf("%s: no committed rate (committed %d of %d sent txs; %v)", BrokenRun, cell.Committed, cell.Sent, err)
	}
	if !cell.LoadValid {
		// A pair runs past saturation on purpose: a generator that fell
		// behind still measured the chain's capacity while what it sent
		// stayed above what the chain committed. A build that eats the
		// CPU starves the generator beside it (a v1.0.1 tree spinning
		// 100 µs per CheckTx did, where the baseline's runs of the same
		// pairs kept up): that is its cost, not the testbed's. So is a
		// node that left the generator's queue unread (backpressure): its
		// reads set the pace the generator kept.
		if sent := sentRate(ls); sent < judge.OverloadMargin*tput && ls.BlockedShare() < judge.BackpressureShare {
			return tput, fmt.Sprintf("%s: the generator fell behind to %.0f tx/s, not past the %.0f tx/s committed: %s", rundir.TestbedBoundPrefix, sent, tput, strings.Join(cell.LoadInvalid, "; "))
		}
	}
	return tput, ""
}

// pace fills a lagging run's SentRate, BusyTPS and BlockedShare
// (judge.Cell.Overloaded)
// from its load.json and blocks; a run that kept its schedule, or whose
// files are missing, is left as it is (then it is only invalid).
func pace(d *rundir.Dir, c *judge.Cell) {
	if c.LoadValid || c.Committed <= 0 || len(c.Testbed) > 0 {
		return
	}
	ls, err := d.ReadLoad()
	if err != nil {
		return
	}
	tput, err := BusyThroughput(d, ls, c.Committed)
	if err != nil || math.IsInf(tput, 0) {
		return
	}
	c.SentRate, c.BusyTPS = round3(sentRate(ls)), tput
	c.BlockedShare = round3(ls.BlockedShare())
}

// sentRate is what the run's generator sent per second over its sends
// (0 when unknown).
func sentRate(ls *rundir.LoadSummary) float64 {
	if !ls.End.After(ls.Start) {
		return 0
	}
	return float64(ls.Sent) / ls.End.Sub(ls.Start).Seconds()
}

// BusyThroughput is a run's committed txs over its busy span: from the
// load's start to the block by which rundir.BusyShare of the run's committed txs
// were in (busySpan). Under overload the chain works from the first
// arrivals until its backlog is drained, so this is its capacity at that
// load; it can never exceed what arrived.
//
// results.json's tx_per_second counts the blocks strictly inside the
// first and last ones over their intervals, exact for a sustained load,
// but under overload the block after the first carries a backlog that
// arrived before it and read 937 tx/s for 811 offered; its pairs'
// ln(candidate/baseline) spread was 0.17 where the busy span's was 0.04
// over the same five A/A pairs (2026-11-28). The span ended at the last
// block holding a run tx until 2026-11-29: a few straggler txs committed
// seconds after the backlog had drained stretched one run's span and not
// its pair's, and an A/A default QA's pairs spread 0.169.
func BusyThroughput(d *rundir.Dir, ls *rundir.LoadSummary, committed int) (float64, error) {
	blocks, _, err := rundir.BlocksCSV.ReadFile(rundir.BlocksCSV.Path(d))
	if err != nil {
		return 0, err
	}
	if committed <= 0 {
		return 0, fmt.Errorf("no committed run tx")
	}
	txs, span := busySpan(blocks, ls.Start.UnixNano(), rundir.BusyShare)
	if txs <= 0 || span <= 0 {
		return 0, fmt.Errorf("no block with a run tx after the load's start")
	}
	return round3(float64(txs) / (float64(span) / 1e9)), nil
}

// busySpan walks the blocks holding run txs in time order and returns the
// run txs up to and including the block where their running count first
// reaches share of all the run's txs, and that block's time from start.
// Every block with a run tx counts, whatever its time: a header's time is
// BFT time (the median of the previous block's commit votes), about a
// block behind the clock, and the first block of a run carried a header
// time before the load's start (542 of 20958 txs, 2026-11-29).
func busySpan(blocks []rundir.Block, start int64, share float64) (txs int, span int64) {
	in := make([]rundir.Block, 0, len(blocks))
	total := 0
	for _, b := range blocks {
		if b.RunTxs > 0 {
			in = append(in, b)
			total += b.RunTxs
		}
	}
	slices.SortFunc(in, func(a, b rundir.Block) int { return cmp.Compare(a.TimeNs, b.TimeNs) })
	target := int(math.Ceil(share * float64(total)))
	for _, b := range in {
		txs += b.RunTxs
		if txs >= target {
			if b.TimeNs <= start {
				return 0, 0
			}
			return txs, b.TimeNs - start
		}
	}
	return 0, 0
}

// PairedSummary is one line for logs and the Test Results: the ratio and
// its interval, the MDE at the pairs run.
func PairedSummary(v *judge.PairedVerdict) string {
	if v == nil {
		return "no pairs"
	}
	if v.MDE > 0 {
		return fmt.Sprintf("%s; detects a change of %.1f %% with 80 %% power at %d pairs", v.Why, 100*v.MDE, v.Pairs)
	}
	return v.Why
}

// pairFirst is the build that runs first in pair i (0-based) of order.
func pairFirst(order string, i int) string {
	if order != rundir.PairOrderABAB && i%2 == 1 {
		return rundir.QACandidate
	}
	return rundir.QABaseline
}
