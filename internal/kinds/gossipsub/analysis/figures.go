package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Figures is the kind's figures.NodeMetrics.
var Figures figures.NodeMetrics = gossipMetrics{}

// gossipMetrics is what a gossip comparison judges (metrics.Metrics:
// the Whiteblock report's figures), per message.
type gossipMetrics struct{}

func (gossipMetrics) Metrics() []judge.Metric                      { return metrics.Metrics }
func (gossipMetrics) ReadFigures(dir string) (*figures.Run, error) { return ReadFigures(dir) }
func (gossipMetrics) Unit() string                                 { return "message" }
func (gossipMetrics) Resampling() string {
	return "two-stage: runs, then messages within each run, each run's figure recomputed from its drawn messages' deliveries; run values alone for host CPU and RSS"
}

// VariantKey: a gossip series varies the graph, the links, the router and
// the rate (Whiteblock's series 1–6, 11), not the hosts' count.
func (gossipMetrics) VariantKey(path string) bool {
	parts := strings.Split(path, ".")
	switch parts[0] {
	case "name", "variants", "gossipsub":
		return true
	case "network":
		if len(parts) == 1 {
			return false
		}
		switch parts[1] {
		case "topology", "m", "degree", "peers", "delay", "jitter", "loss", "bandwidth":
			return true
		}
	case "publish":
		return len(parts) == 2 && parts[1] == "rate"
	}
	return false
}

func (gossipMetrics) VariantKeys() string {
	return "[network] topology, m, degree, peers and link conditions, [gossipsub], [publish] rate"
}

// msgFigures is one message of a gossip run: its deliveries.
type msgFigures struct {
	expected, delivered int
	dissem              []float64 // ms, every delivery
	lastMs              float64   // publish -> last delivery; NaN: none
	lastHop, maxHop     int       // -1: none known
	dups                int
}

// ReadFigures reads a gossip run directory's results.json (gossip section)
// and deliveries.csv as a comparison judges them. An invalid run is an
// error wrapping figures.ErrInvalidRun.
func ReadFigures(path string) (*figures.Run, error) {
	d, err := rundir.Open(path)
	if err != nil {
		return nil, err
	}
	res, err := d.ReadResults()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	g := res.Gossip
	if g == nil {
		return nil, fmt.Errorf("%s: results.json has no gossip section (not a gossip run, or analysed before the gossip analysis)", path)
	}
	if !res.Valid {
		return nil, fmt.Errorf("%w: %s", figures.ErrInvalidRun, strings.Join(res.Invalid, "; "))
	}
	f := &figures.Run{Dir: path, Results: res, Values: map[string]float64{}}
	set := func(k string, v float64, ok bool) {
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			f.Values[k] = v
		}
	}
	set("mdr", 100*g.MDR, g.Expected > 0)
	dn := g.Dissemination.N > 0
	set("dissemination_avg", g.Dissemination.Avg, dn)
	set("dissemination_p50", g.Dissemination.P50, dn)
	set("dissemination_p95", g.Dissemination.P95, dn)
	set("dissemination_p99", g.Dissemination.P99, dn)
	set("dissemination_max", g.Dissemination.Max, dn)
	set("last_delivery_avg", g.LastDelivery.Avg, g.LastDelivery.N > 0)
	set("last_delivery_p99", g.LastDelivery.P99, g.LastDelivery.N > 0)
	set("last_delivery_hop", g.LastDeliveryHop.Avg, g.LastDeliveryHop.N > 0)
	set("max_hop", g.MaxHop.Avg, g.MaxHop.N > 0)
	set("duplicates", g.Duplicates.Avg, g.Duplicates.N > 0)
	var cpuSum, cpuMax, rssMax float64
	sampled := 0
	for _, n := range g.HostNodes {
		if n.Proc.Samples == 0 {
			continue
		}
		sampled++
		cpuSum += n.Proc.CPUAvgPct
		cpuMax, rssMax = math.Max(cpuMax, n.Proc.CPUMaxPct), math.Max(rssMax, n.Proc.RSSMaxMB)
	}
	set("host_cpu_avg", cpuSum/float64(sampled), sampled > 0)
	set("host_cpu_max", cpuMax, sampled > 0)
	set("host_rss_max", rssMax, sampled > 0)

	msgs, err := readMessages(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(msgs) > 0 {
		f.Inner = messageUnits(msgs)
	}
	return f, nil
}

// readMessages groups deliveries.csv by message, in file order.
func readMessages(d *rundir.Dir) ([]msgFigures, error) {
	var out []msgFigures
	at := map[string]int{}
	lastNs := map[int]int64{}
	_, _, err := rundir.DeliveriesCSV.ReadFileFilter(rundir.DeliveriesCSV.Path(d), func(r *rundir.Delivery) bool {
		i, ok := at[r.MsgID]
		if !ok {
			i = len(out)
			at[r.MsgID] = i
			out = append(out, msgFigures{lastMs: math.NaN(), lastHop: -1, maxHop: -1})
		}
		m := &out[i]
		m.expected++
		if r.State != rundir.DeliveryDelivered {
			return false
		}
		m.delivered++
		m.dups += r.Duplicates
		m.dissem = append(m.dissem, float64(r.DeliverNs-r.PublishNs)/1e6)
		// The analysis' rule: the first row (plan order) with the latest
		// delivery is the message's last; its depth when known.
		if l, seen := lastNs[i]; !seen || r.DeliverNs > l {
			lastNs[i] = r.DeliverNs
			m.lastMs = float64(r.DeliverNs-r.PublishNs) / 1e6
			m.lastHop = r.Hop
		}
		if r.Hop >= 0 {
			m.maxHop = max(m.maxHop, r.Hop)
		}
		return false // nothing kept: the figures are in out
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		sort.Float64s(out[i].dissem)
	}
	return out, nil
}

// messageUnits: the run's messages as the bootstrap's units; each figure
// recomputed from the drawn messages as the analysis computes it from all.
func messageUnits(msgs []msgFigures) func(key string) (judge.Units, bool) {
	n := len(msgs)
	lists := make([][]float64, n)
	for i, m := range msgs {
		lists[i] = m.dissem
	}
	dissem := judge.NewPooled(lists)
	// Per message, its last delivery as a one-value list, so the pooled
	// percentile over messages is the analysis' over last deliveries.
	lastOf := make([][]float64, n)
	for i, m := range msgs {
		if !math.IsNaN(m.lastMs) {
			lastOf[i] = []float64{m.lastMs}
		}
	}
	last := judge.NewPooled(lastOf)
	ratio := func(num, den func(m *msgFigures) (float64, bool)) func(idx []int) float64 {
		return func(idx []int) float64 {
			var a, b float64
			for _, i := range idx {
				x, ok := num(&msgs[i])
				if !ok {
					continue
				}
				y, _ := den(&msgs[i])
				a, b = a+x, b+y
			}
			if b == 0 {
				return math.NaN()
			}
			return a / b
		}
	}
	one := func(*msgFigures) (float64, bool) { return 1, true }
	return func(key string) (judge.Units, bool) {
		var stat func(idx []int) float64
		switch key {
		case "mdr":
			stat = ratio(func(m *msgFigures) (float64, bool) { return 100 * float64(m.delivered), true },
				func(m *msgFigures) (float64, bool) { return float64(m.expected), true })
		case "dissemination_avg":
			stat = ratio(func(m *msgFigures) (float64, bool) { return sum(m.dissem), true },
				func(m *msgFigures) (float64, bool) { return float64(len(m.dissem)), true })
		case "dissemination_p50":
			stat = dissem.Pct(50)
		case "dissemination_p95":
			stat = dissem.Pct(95)
		case "dissemination_p99":
			stat = dissem.Pct(99)
		case "dissemination_max":
			stat = dissem.Pct(100)
		case "last_delivery_avg":
			stat = ratio(func(m *msgFigures) (float64, bool) { return m.lastMs, !math.IsNaN(m.lastMs) }, one)
		case "last_delivery_p99":
			stat = last.Pct(99)
		case "last_delivery_hop":
			stat = ratio(func(m *msgFigures) (float64, bool) { return float64(m.lastHop), m.lastHop >= 0 }, one)
		case "max_hop":
			stat = ratio(func(m *msgFigures) (float64, bool) { return float64(m.maxHop), m.maxHop >= 0 }, one)
		case "duplicates":
			stat = ratio(func(m *msgFigures) (float64, bool) { return float64(m.dups), true },
				func(m *msgFigures) (float64, bool) { return float64(m.delivered), true })
		default:
			return judge.Units{}, false // host CPU and RSS: run values
		}
		return judge.Units{N: n, Stat: stat}, true
	}
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}
