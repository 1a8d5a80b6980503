package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The run-level views of issue 23 (results.json per_second, p2p,
// mempool_capacity). Each is a pure function of the run directory's
// records, shared with the report, which computes them the same way for a
// results.json written before they existed.

// PerSecondStats is tm-bench's per-second summary over the blocks holding
// the run's txs: the span from the first to the last of them is cut into
// whole seconds from the first (the last one partial: n blocks a second
// apart span n−1 s but fill n seconds), each block counts in the second of
// its header time with its txs, and every second, empty ones too, is one
// value of the avg / population stddev / max. blocksPerMin is the run's
// 60 / average block interval. Nil without two blocks of run txs.
func PerSecondStats(blocks []rundir.Block, blocksPerMin float64) *rundir.PerSecond {
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, b := range blocks {
		if b.RunTxs > 0 {
			first, last = min(first, b.TimeNs), max(last, b.TimeNs)
		}
	}
	if first >= last {
		return nil
	}
	n := int((last-first)/1e9) + 1
	txs, blks := make([]float64, n), make([]float64, n)
	for _, b := range blocks {
		if b.TimeNs < first || b.TimeNs > last {
			continue
		}
		i := int((b.TimeNs - first) / 1e9)
		txs[i] += float64(b.NumTxs)
		blks[i]++
	}
	return &rundir.PerSecond{Seconds: n, Txs: rateStats(txs), Blocks: rateStats(blks), BlocksPerMin: analyze.Round3(blocksPerMin)}
}

func rateStats(v []float64) rundir.RateStats {
	var s, mx float64
	for _, x := range v {
		s += x
		mx = math.Max(mx, x)
	}
	avg := s / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - avg) * (x - avg)
	}
	return rundir.RateStats{Avg: analyze.Round3(avg), Std: analyze.Round3(math.Sqrt(ss / float64(len(v)))), Max: mx}
}

// P2P counters without the namespace, newest first: CometBFT v0.38 and v1
// count bytes per message type; v0.34 (and Tendermint Core) per peer and
// channel. A node exporting the first pair is read from it alone.
var p2pCounters = [][2]string{
	{"p2p_message_send_bytes_total", "p2p_message_receive_bytes_total"},
	{"p2p_peer_send_bytes_total", "p2p_peer_receive_bytes_total"},
}

// IsP2PCounter reports whether metric (without its namespace) is one of
// the p2p byte counters P2PSeries reads.
func IsP2PCounter(metric string) bool {
	for _, c := range p2pCounters {
		if metric == c[0] || metric == c[1] {
			return true
		}
	}
	return false
}

// CumPoint is a counter's cumulative increase since the node's first sample.
type CumPoint struct {
	TimeNs int64
	Value  float64
}

// P2PSeries is each node's p2p bytes sent and received since its first
// sample, summed over the counter's label sets (message types or peers and
// channels). A drop of a label set's counter (a restarted node) counts its
// new value as the increase; a label set that appears after the node's
// first scrape counts its first value. ns gives a node's metrics
// namespace; metric is the send counter used (without namespace), "" when
// no node has one.
func P2PSeries(samples []rundir.Sample, ns func(node string) string) (metric string, sent, recv map[string][]CumPoint) {
	type key struct{ node, labels string }
	have := map[string]map[string]bool{} // node -> counter -> seen
	for i := range samples {
		s := &samples[i]
		if m, ok := strings.CutPrefix(s.Metric, ns(s.Node)+"_"); ok && IsP2PCounter(m) {
			if have[s.Node] == nil {
				have[s.Node] = map[string]bool{}
			}
			have[s.Node][m] = true
		}
	}
	pick := map[string][2]string{}
	for node, h := range have {
		for _, c := range p2pCounters {
			if h[c[0]] || h[c[1]] {
				pick[node] = c
				if metric == "" || c == p2pCounters[0] {
					metric = c[0]
				}
				break
			}
		}
	}
	sent, recv = map[string][]CumPoint{}, map[string][]CumPoint{}
	for dir, out := range []map[string][]CumPoint{sent, recv} {
		firstNs := map[string]int64{}
		last := map[key]float64{}
		seen := map[key]bool{}
		inc := map[string]map[int64]float64{} // node -> time -> increase
		var rows []*rundir.Sample
		for i := range samples {
			s := &samples[i]
			c, ok := pick[s.Node]
			if !ok {
				continue
			}
			if s.Metric == ns(s.Node)+"_"+c[dir] {
				rows = append(rows, s)
			}
			if t, ok := firstNs[s.Node]; !ok || s.TimeNs < t {
				firstNs[s.Node] = s.TimeNs
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].TimeNs < rows[j].TimeNs })
		for _, s := range rows {
			k := key{s.Node, s.Labels}
			d := 0.0
			switch {
			case seen[k] && s.Value >= last[k]:
				d = s.Value - last[k]
			case seen[k]: // reset
				d = s.Value
			case s.TimeNs > firstNs[s.Node]: // a label set born during the run
				d = s.Value
			}
			seen[k], last[k] = true, s.Value
			if inc[s.Node] == nil {
				inc[s.Node] = map[int64]float64{}
			}
			inc[s.Node][s.TimeNs] += d
		}
		for node, m := range inc {
			ts := make([]int64, 0, len(m))
			for t := range m {
				ts = append(ts, t)
			}
			sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
			cum := 0.0
			for _, t := range ts {
				cum += m[t]
				out[node] = append(out[node], CumPoint{t, cum})
			}
		}
	}
	return metric, sent, recv
}

// at is a cumulative series' value at time t: its last point at or before
// t (0 before the first).
func at(s []CumPoint, t int64) float64 {
	i := sort.Search(len(s), func(i int) bool { return s[i].TimeNs > t })
	if i == 0 {
		return 0
	}
	return s[i-1].Value
}

// P2PWindow is the window the traffic is summed over: from the load's
// start (the load_start event, else the first tx sent) to the last block
// holding a run tx. ok is false without both ends.
func P2PWindow(events []rundir.Event, firstSentNs int64, blocks []rundir.Block) (from, to int64, ok bool) {
	for _, e := range events {
		if e.Kind == rundir.EventLoadStart || e.Kind == "load_started" {
			from = e.Time.UnixNano()
			break
		}
	}
	if from == 0 {
		from = firstSentNs
	}
	for _, b := range blocks {
		if b.RunTxs > 0 {
			to = max(to, b.TimeNs)
		}
	}
	return from, to, from > 0 && to > from
}

// P2PTraffic sums every node's p2p bytes over [from, to] and divides the
// bytes sent by the committed txs. Nil when no node exported a p2p byte
// counter.
func P2PTraffic(samples []rundir.Sample, ns func(string) string, from, to int64, committed int) *rundir.P2PTraffic {
	metric, sent, recv := P2PSeries(samples, ns)
	if metric == "" {
		return nil
	}
	t := &rundir.P2PTraffic{Metric: metric, FromNs: from, ToNs: to}
	for _, s := range sent {
		t.SentBytes += at(s, to) - at(s, from)
	}
	for _, s := range recv {
		t.ReceivedBytes += at(s, to) - at(s, from)
	}
	if committed > 0 {
		t.BytesPerTx = analyze.Round3(t.SentBytes / float64(committed))
	}
	return t
}

// DefaultMempoolSize is `mempool.size` in the config.toml every CometBFT
// release benchnet runs writes (v0.34 to v1, Tendermint Core v0.34).
const DefaultMempoolSize = 5000

// MempoolLimit is the smallest `mempool.size` of the plan's full nodes and
// validators: the manifest's override ("config") or the releases' default
// ("default").
func MempoolLimit(p *plan.Testnet) (limit int, source string) {
	limit, source = DefaultMempoolSize, "default"
	if p == nil {
		return limit, source
	}
	first := true
	for _, n := range p.Nodes {
		if n.Role == "seed" {
			continue
		}
		v, src := DefaultMempoolSize, "default"
		if x, ok := n.Config["mempool.size"]; ok {
			if f, err := strconv.ParseFloat(fmt.Sprint(x), 64); err == nil && f > 0 {
				v, src = int(f), "config"
			}
		}
		if first || v < limit {
			limit, source, first = v, src, false
		}
	}
	return limit, source
}

// AtCapacity counts the mempool poller's rounds in [from, to] (a round:
// the samples of one poll time, rounded to 100 ms) in which any non-seed
// node held limit txs or more.
func AtCapacity(p *plan.Testnet, mempool []rundir.MempoolSample, from, to int64) *rundir.MempoolCapacity {
	limit, src := MempoolLimit(p)
	seed := map[string]bool{}
	if p != nil {
		for _, n := range p.Nodes {
			seed[n.Name] = n.Role == "seed"
		}
	}
	rounds := map[int64]bool{}
	for _, m := range mempool {
		if seed[m.Node] || m.TimeNs < from || m.TimeNs > to {
			continue
		}
		k := (m.TimeNs + 5e7) / 1e8
		rounds[k] = rounds[k] || m.Size >= limit
	}
	if len(rounds) == 0 {
		return nil
	}
	c := &rundir.MempoolCapacity{Limit: limit, Source: src, Rounds: len(rounds)}
	for _, full := range rounds {
		if full {
			c.AtCap++
		}
	}
	c.Share = analyze.Round3(float64(c.AtCap) / float64(c.Rounds))
	return c
}

// runViews fills results.json's run-level views from the run directory.
func runViews(dir string, in *Input, res *rundir.Results) error {
	res.Blocks = blockEntries(in)
	if bs := res.BlockStats; bs.AvgBlockSec > 0 {
		res.PerSecond = PerSecondStats(in.Blocks, 60/bs.AvgBlockSec)
	} else {
		res.PerSecond = PerSecondStats(in.Blocks, 0)
	}
	var firstSent int64
	for _, s := range in.Sent {
		if s.SentAt > 0 && (firstSent == 0 || s.SentAt < firstSent) {
			firstSent = s.SentAt
		}
	}
	res.MempoolReach = Reach(in.Plan, in.Sent, in.Mempool)
	from, to, ok := P2PWindow(in.Events, firstSent, in.Blocks)
	if !ok {
		return nil
	}
	res.MempoolCapacity = AtCapacity(in.Plan, in.Mempool, from, to)
	d := &rundir.Dir{Path: dir}
	ns := NamespaceOf(in.Plan)
	samples, _, err := rundir.SamplesCSV.ReadFileFilter(rundir.SamplesCSV.Path(d), func(s *rundir.Sample) bool {
		m, ok := strings.CutPrefix(s.Metric, ns(s.Node)+"_")
		return ok && (IsP2PCounter(m) || isProposalSeries(m))
	})
	if err != nil && len(samples) == 0 {
		return nil // no metrics: no traffic figure
	}
	res.P2P = P2PTraffic(samples, ns, from, to, res.Accounting.Committed)
	res.ProposalTiming = ProposalTimingOf(samples, ns, from, to)
	return nil
}

// NamespaceOf maps a node to its metrics namespace from the plan
// (plan.DefaultNamespace for a node it does not name).
func NamespaceOf(p *plan.Testnet) func(string) string {
	m := map[string]string{}
	if p != nil {
		for i := range p.Nodes {
			m[p.Nodes[i].Name] = p.Nodes[i].Namespace()
		}
	}
	return func(node string) string {
		if ns, ok := m[node]; ok {
			return ns
		}
		return plan.DefaultNamespace
	}
}

// blockEntries is results.json's block_stats: every harvested block of
// the run's height range (all of blocks.csv without harvest.json), in
// height order.
func blockEntries(in *Input) []rundir.BlockEntry {
	out := []rundir.BlockEntry{}
	for _, b := range in.Blocks {
		if in.Harvest != nil && (b.Height < in.Harvest.From || b.Height > in.Harvest.To) {
			continue
		}
		out = append(out, rundir.BlockEntry{Height: b.Height, TxCount: b.NumTxs,
			Time: time.Unix(0, b.TimeNs).UTC().Format(time.RFC3339Nano)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Height < out[j].Height })
	return out
}

// runViewRows adds the run-level views to the printed summary.
func runViewRows(r *rundir.Results, row func(k, v, note string)) {
	if ps := r.PerSecond; ps != nil {
		row("txs/sec", fmt.Sprintf("%.1f", ps.Txs.Avg), fmt.Sprintf("tm-bench: avg, stddev %.1f, max %.0f over %d s", ps.Txs.Std, ps.Txs.Max, ps.Seconds))
		row("blocks/sec", fmt.Sprintf("%.3f", ps.Blocks.Avg), fmt.Sprintf("tm-bench: avg, stddev %.3f, max %.0f", ps.Blocks.Std, ps.Blocks.Max))
		if ps.BlocksPerMin > 0 {
			row("blocks/min", fmt.Sprintf("%.1f", ps.BlocksPerMin), "60 / average block interval")
		}
	}
	if p := r.P2P; p != nil {
		row("p2p bytes/tx", fmt.Sprintf("%.0f", p.BytesPerTx), fmt.Sprintf("%.2f MiB sent, %.2f MiB received by all nodes over %.1f s (%s)",
			p.SentBytes/(1<<20), p.ReceivedBytes/(1<<20), float64(p.ToNs-p.FromNs)/1e9, p.Metric))
	}
	if p := r.ProposalTiming; p != nil {
		row("proposal delay", fmt.Sprintf("p50 %.0f ms", p.P50Ms), fmt.Sprintf("receive time − proposal timestamp: mean %.0f ms, p99 %.0f ms; %d of %d proposals untimely by PBTS's rule (%d nodes)",
			p.MeanMs, p.P99Ms, p.Untimely, p.Proposals, p.Nodes))
	}
	if m := r.MempoolReach; m != nil {
		row("mempool reach", reachText(m.AllMs), fmt.Sprintf("until every polled mempool held a tx, from the first send to %s (poller interval %.0f ms)", m.Target, m.PollMs))
	}
	if c := r.MempoolCapacity; c != nil {
		row("at capacity", fmt.Sprintf("%.1f %%", 100*c.Share), fmt.Sprintf("of %d poller rounds a node held ≥ mempool.size = %d (%s)", c.Rounds, c.Limit, c.Source))
	}
}

// reachText is a reach time in ms, or "never".
func reachText(ms float64) string {
	if ms < 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f ms", ms)
}
