package analysis

import (
	"math"
	"slices"
	"sort"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Reach is the mempool-propagation figure of a single-node load: nil when
// the txs went to more than one node or fewer than two were polled. A node's reach
// is its first mempool sample with a tx at or after the first send; the
// figure cannot be finer than the poller's interval, which it states.
// Nodes first polled after the first send are left out (named in Late).
func Reach(p *plan.Testnet, sent []rundir.Sent, mempool []rundir.MempoolSample) *rundir.MempoolReach {
	var target string
	var first int64
	for _, s := range sent {
		if s.SentAt <= 0 {
			continue
		}
		if target != "" && s.Node != target {
			return nil
		}
		target = s.Node
		if first == 0 || s.SentAt < first {
			first = s.SentAt
		}
	}
	if target == "" {
		return nil
	}
	seed := map[string]bool{}
	if p != nil {
		for _, n := range p.Nodes {
			seed[n.Name] = n.Role == "seed"
		}
	}
	reach := map[string]int64{}   // first sample with a tx, ns
	times := map[string][]int64{} // every sample, for the interval
	polled := map[string]int64{}  // first sample, ns
	for _, m := range mempool {
		if seed[m.Node] {
			continue
		}
		times[m.Node] = append(times[m.Node], m.TimeNs)
		if t, ok := polled[m.Node]; !ok || m.TimeNs < t {
			polled[m.Node] = m.TimeNs
		}
		if _, ok := reach[m.Node]; !ok {
			reach[m.Node] = -1
		}
		if m.TimeNs >= first && m.Size > 0 && (reach[m.Node] < 0 || m.TimeNs < reach[m.Node]) {
			reach[m.Node] = m.TimeNs
		}
	}
	// A node first polled after the first send joined during the load (a
	// rotating or late node): its wait says when it started, not how fast
	// gossip is.
	var late []string
	for node, t := range polled {
		if t > first {
			late = append(late, node)
			delete(reach, node)
		}
	}
	if len(reach) < 2 {
		return nil // one polled node: nothing to propagate to
	}
	slices.Sort(late)
	r := &rundir.MempoolReach{Target: target, Late: late}
	var gaps []float64
	for _, ts := range times {
		slices.Sort(ts)
		for i := 1; i < len(ts); i++ {
			gaps = append(gaps, float64(ts[i]-ts[i-1])/1e6)
		}
	}
	if len(gaps) > 0 {
		sort.Float64s(gaps)
		r.PollMs = math.Round(gaps[len(gaps)/2]*10) / 10
	}
	for node, t := range reach {
		ms := -1.0
		if t >= 0 {
			ms = math.Round(float64(t-first)/1e5) / 10
		}
		r.Nodes = append(r.Nodes, rundir.NodeReach{Node: node, ReachMs: ms})
		switch {
		case ms < 0 || r.AllMs < 0:
			r.AllMs = -1
		default:
			r.AllMs = max(r.AllMs, ms)
		}
	}
	slices.SortFunc(r.Nodes, func(a, b rundir.NodeReach) int {
		if a.Node < b.Node {
			return -1
		}
		if a.Node > b.Node {
			return 1
		}
		return 0
	})
	return r
}
