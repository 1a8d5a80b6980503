package chainreport

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// figure is one plot of the report. Build returns nil when the run has no
// data for it; the report then says so instead of showing an image.
type figure struct {
	name  string // file name under plots/, without .png
	title string
	what  string // one sentence: what to look for
	build func(r *run) (*plot.Plot, string)
}

// figures, in the order of the CometBFT v1 QA report (latencies first, then
// the Prometheus metrics, then the machine).
var figures = []figure{
	{"latency_per_block", "Latency per block",
		"Each dot is a block: a rising trend means txs wait longer and longer (the load is beyond saturation); isolated high dots match round changes or node events.",
		plotLatencyPerBlock},
	{"latency_cdf", "Latency distribution",
		"The share of committed txs at or below each latency; a long flat tail past p95 means a few blocks were slow, not the whole run.",
		plotLatencyCDF},
	{"mempool_size", "Mempool size",
		"Average and maximum over full nodes and validators (seeds keep no txs and are left out). Sampled faster than blocks are made (the harness polls every node every 500 ms), so each block's sawtooth is the chain's, not an artifact of sampling. The average should stay flat under a sustainable load; a steadily growing maximum means some node receives txs faster than blocks take them.",
		plotMempool},
	{"mempool_total", "Mempool size, cumulative over nodes",
		"The sum over full nodes and validators: every tx waiting anywhere, counted once per node that holds it. Growth that does not come back down after each block is a backlog.",
		plotMempoolTotal},
	{"peers", "Peers per node",
		"Every node should keep its expected peer count; a dip marks a disconnection, a node at 0 is isolated. The dashed black line is the average.",
		perNodeMetric("p2p_peers", "peers", true)},
	{"rounds", "Consensus rounds per height",
		"Round 0 everywhere is a healthy network; rounds above 0 mean proposals or votes arrived too late and a height needed another round.",
		perNodeMetric("consensus_rounds", "round", false)},
	{"blocks_per_minute", "Blocks per minute",
		"The rate of cometbft_consensus_height over 60 s, from the load's start (no window reaches back before it): a drop while load runs means consensus slows under it.",
		perNodeRate("consensus_height", "blocks / min")},
	{"txs_per_minute", "Transactions per minute",
		"The rate of cometbft_consensus_total_txs over 60 s, from the load's start (no window reaches back before it; the first points still hold the block the first txs wait for): it should follow the offered load; a plateau below it is saturation.",
		perNodeRate("consensus_total_txs", "txs / min")},
	{"block_size", "Block size",
		"Bytes of every block of the run (one dot per block, from the chain itself); it grows with the load until blocks hit the size limit.",
		plotBlockSize},
	{"rss", "Resident memory per node",
		"Memory that keeps growing at a constant load is a leak or an unbounded queue. The dashed black line is the average over the nodes.",
		plotRSS},
	{"load1", "Host load (1 min)",
		"All nodes share this machine: a load above its CPU count (dashed) means the machine, not the software, may be the bottleneck.",
		plotLoad1},
	{"cpu", "CPU per process",
		"CPU of each node process and of the harness (benchnet), in % of one core; a harness near 100 % means the load generator itself may lag.",
		plotCPU},
}

const timeAxis = report.TimeAxis

// --- latency ---

func plotLatencyPerBlock(r *run) (*plot.Plot, string) {
	xy := r.blockLatencies(r.t0)
	if len(xy) == 0 {
		return nil, "no committed tx with a latency in txs.csv"
	}
	p := page.NewPlot("Latency per block ("+r.latencyBlockName()+")", timeAxis+" — block time", "mean latency of the block's txs (ms)")
	s, _ := plotter.NewScatter(xy)
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(2.5)
	s.GlyphStyle.Color = plotutil.Color(0)
	p.Add(s)
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

func (r *run) latencyBlockName() string {
	if r.latencyColumn() == "latency_next_ms" {
		return "time of block H+1 − send time"
	}
	return "time of block H − send time"
}

func (r *run) latencies() []float64 {
	var l []float64
	for _, t := range r.txs {
		if t.state == "committed" && t.hasLatency {
			l = append(l, t.latency)
		}
	}
	sort.Float64s(l)
	return l
}

func plotLatencyCDF(r *run) (*plot.Plot, string) {
	l := r.latencies()
	if len(l) == 0 {
		return nil, "no committed tx with a latency in txs.csv"
	}
	p := page.NewPlot(fmt.Sprintf("Latency distribution (%d committed txs)", len(l)), "latency (ms) — "+r.latencyBlockName(), "fraction of txs ≤ latency")
	xy := make(plotter.XYs, 0, 2*len(l))
	for i, v := range l {
		xy = append(xy, plotter.XY{X: v, Y: float64(i) / float64(len(l))}, plotter.XY{X: v, Y: float64(i+1) / float64(len(l))})
	}
	line, _ := plotter.NewLine(xy)
	line.Color = plotutil.Color(0)
	line.Width = vg.Points(1.5)
	p.Add(line)
	page.AddLegend(p, "CDF", line)
	for i, q := range []float64{0.50, 0.95, 0.99} {
		v := page.Percentile(l, q)
		m, _ := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: 1}})
		m.Color = plotutil.Color(i + 1)
		m.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(m)
		page.AddLegend(p, fmt.Sprintf("p%02.0f = %s ms", q*100, page.Ms(v)), m)
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	p.Y.Min, p.Y.Max = 0, 1
	return p, ""
}

// --- metrics over time ---

// byNode groups one metric's samples by node as (seconds, value) points;
// several series of one node at one time (other labels) keep the maximum.
func (r *run) byNode(samples []rundir.Sample) (nodes []string, series map[string]plotter.XYs) {
	series = map[string]plotter.XYs{}
	for _, s := range samples { // sorted by node, time
		xy := series[s.Node]
		x := r.sec(s.TimeNs)
		if n := len(xy); n > 0 && xy[n-1].X == x {
			xy[n-1].Y = math.Max(xy[n-1].Y, s.Value)
			continue
		}
		series[s.Node] = append(xy, plotter.XY{X: x, Y: s.Value})
	}
	for n := range series {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, series
}

// addLines adds one line per node; the legend names nodes only when it
// stays readable.
func addLines(p *plot.Plot, nodes []string, series map[string]plotter.XYs) {
	for i, n := range nodes {
		l, err := plotter.NewLine(series[n])
		if err != nil {
			continue
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.2)
		p.Add(l)
		if len(nodes) <= 12 {
			page.AddLegend(p, n, l)
		}
	}
}

// perNodeMetric draws the node series key (nodeMetrics: without the
// namespace) of every node.
func perNodeMetric(key, unit string, avg bool) func(r *run) (*plot.Plot, string) {
	return func(r *run) (*plot.Plot, string) {
		nodes, series := r.byNode(r.samples[key])
		metric := r.metricName(key)
		if len(nodes) == 0 {
			return nil, "no " + metric + " samples in metrics/" + collect.SamplesFile
		}
		p := page.NewPlot(metric, timeAxis, unit)
		p.Title.Text += " " + r.drawNodes(p, nodes, series, avg)
		p.Y.Min = 0
		r.markEvents(p)
		return p, ""
	}
}

// rateWindow is the window of the per-minute rates, like Prometheus'
// rate(x[1m]); shorter runs use what they have.
const rateWindow = 60.0

// perMinute turns a cumulative series into its rate per minute over the
// trailing window. A decrease (a restarted node) starts the window again.
// No window reaches back before from (s on the time axis, the load's
// start): the last sample at or before it is the windows' earliest start
// and the first point is the sample after it. The collector starts before
// the load (and the warm-up), so a window from its first sample averages
// the idle seconds before the load in and the rates ramp up over their
// first ~20 s; those samples stay in samples.csv. The first points still
// hold the chain's own delay: no block holds a run tx until about one block
// after the load's start. from ≤ the first sample keeps every point.
func perMinute(xy plotter.XYs, from float64) plotter.XYs {
	var out plotter.XYs
	start := 0
	for start+1 < len(xy) && xy[start+1].X <= from {
		start++
	}
	for i := start + 1; i < len(xy); i++ {
		if xy[i].Y < xy[i-1].Y {
			start = i
			continue
		}
		for start < i-1 && xy[i].X-xy[start].X > rateWindow {
			start++
		}
		if dt := xy[i].X - xy[start].X; dt > 0 && i > start {
			out = append(out, plotter.XY{X: xy[i].X, Y: (xy[i].Y - xy[start].Y) / dt * 60})
		}
	}
	return out
}

// rateFrom is where the rates start on the time axis: the load's start
// (load_start, or load_started in older runs), else the origin.
func (r *run) rateFrom() float64 {
	for _, e := range r.events {
		if e.Kind == rundir.EventLoadStart || e.Kind == "load_started" {
			return r.sec(e.Time.UnixNano())
		}
	}
	return math.Inf(-1)
}

func perNodeRate(key, unit string) func(r *run) (*plot.Plot, string) {
	return func(r *run) (*plot.Plot, string) {
		nodes, series := r.byNode(r.samples[key])
		metric := r.metricName(key)
		var keep []string
		for _, n := range nodes {
			if series[n] = perMinute(series[n], r.rateFrom()); len(series[n]) > 0 {
				keep = append(keep, n)
			}
		}
		if len(keep) == 0 {
			return nil, "fewer than two " + metric + " samples per node in metrics/" + collect.SamplesFile
		}
		p := page.NewPlot(fmt.Sprintf("rate(%s[%.0fs])", metric, rateWindow), timeAxis, unit)
		p.Title.Text += " " + r.drawNodes(p, keep, series, false)
		p.Y.Min = 0
		r.markEvents(p)
		return p, ""
	}
}

// mempoolSeries is every full node's and validator's mempool size over
// time (seeds hold no txs and would pull the average down). It prefers
// mempool.csv, which the harness polls every 500 ms in rounds that ask all
// nodes at once, over the 1 s Prometheus scrape: a 1 s scrape against
// 1.2 s blocks draws a 6 s sawtooth (aliasing) that is not in the chain.
func (r *run) mempoolSeries() (nodes []string, series map[string]plotter.XYs, src string) {
	vals, src := r.mempool, "mempool.csv, every 500 ms"
	if len(vals) == 0 {
		src = r.metricName("mempool_size") + ", scraped: may alias against block times"
		for _, s := range r.samples["mempool_size"] {
			vals = append(vals, nodeValue{s.TimeNs, s.Node, s.Value})
		}
	}
	series = map[string]plotter.XYs{}
	for _, v := range vals {
		if r.roleOf(v.node) == "seed" {
			continue
		}
		series[v.node] = append(series[v.node], plotter.XY{X: r.sec(v.timeNs), Y: v.value})
	}
	for n, xy := range series {
		sort.SliceStable(xy, func(i, j int) bool { return xy[i].X < xy[j].X })
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, series, src
}

const noMempool = "no mempool.csv and no cometbft_mempool_size samples of a full node or validator"

// plotMempool: average and maximum over full nodes and validators, per
// sampling round.
func plotMempool(r *run) (*plot.Plot, string) {
	nodes, series, src := r.mempoolSeries()
	if len(nodes) == 0 {
		return nil, r.nsText(noMempool)
	}
	p := page.NewPlot(fmt.Sprintf("Mempool size over %d full nodes and validators (%s)", len(nodes), src), timeAxis, "txs in mempool")
	for i, s := range []struct {
		name string
		f    func([]float64) float64
	}{{"average", mean}, {"maximum", maxOf}} {
		xy := aggregate(nodes, series, s.f)
		l, _ := plotter.NewLine(xy)
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		page.AddLegend(p, s.name, l)
		if s.name == "maximum" {
			r.mempoolLimitLine(p, 1, maxOfY(xy)) // runviews.go
		}
	}
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

// plotMempoolTotal: the sum over full nodes and validators per round.
func plotMempoolTotal(r *run) (*plot.Plot, string) {
	nodes, series, src := r.mempoolSeries()
	if len(nodes) == 0 {
		return nil, r.nsText(noMempool)
	}
	p := page.NewPlot(fmt.Sprintf("Mempool size summed over %d full nodes and validators (%s)", len(nodes), src), timeAxis, "txs in all mempools")
	xy := aggregate(nodes, series, sum)
	l, _ := plotter.NewLine(xy)
	l.Color = plotutil.Color(0)
	l.Width = vg.Points(1.5)
	l.FillColor = color.RGBA{R: 0xc8, G: 0xd8, B: 0xf0, A: 0xff}
	p.Add(l)
	page.AddLegend(p, "cumulative", l)
	r.mempoolLimitLine(p, len(nodes), maxOfY(xy)) // runviews.go
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

// plotBlockSize draws every block from blocks.csv: the chain's own sizes,
// one per block, where a per-node gauge scraped every second would miss or
// repeat blocks.
func plotBlockSize(r *run) (*plot.Plot, string) {
	if len(r.blocks) == 0 {
		if len(r.samples["consensus_block_size_bytes"]) > 0 {
			return perNodeMetric("consensus_block_size_bytes", "bytes", false)(r)
		}
		return nil, "no blocks.csv and no " + r.metricName("consensus_block_size_bytes") + " samples"
	}
	xy := make(plotter.XYs, 0, len(r.blocks))
	for _, b := range r.blocks {
		xy = append(xy, plotter.XY{X: r.sec(b.timeNs), Y: float64(b.sizeBytes)})
	}
	p := page.NewPlot("Block size (blocks.csv)", timeAxis+" — block time", "bytes")
	s, _ := plotter.NewScatter(xy)
	s.GlyphStyle.Color = plotutil.Color(0)
	p.Add(s)
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

func (r *run) procSeries(f func(prev, cur procRow) (float64, bool)) ([]string, map[string]plotter.XYs) {
	series := map[string]plotter.XYs{}
	last := map[string]procRow{}
	for _, row := range r.proc {
		prev := last[row.node]
		last[row.node] = row
		if v, use := f(prev, row); use {
			series[row.node] = append(series[row.node], plotter.XY{X: r.sec(row.timeNs), Y: v})
		}
	}
	nodes := make([]string, 0, len(series))
	for n := range series {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, series
}

func plotRSS(r *run) (*plot.Plot, string) {
	nodes, series := r.procSeries(func(_, cur procRow) (float64, bool) { return cur.rssBytes / (1 << 20), true })
	src := filepath.Base(rundir.ProcCSV.Name)
	if len(nodes) == 0 {
		src = "process_resident_memory_bytes"
		nodes, series = r.byNode(r.samples[src])
		for _, n := range nodes {
			for i := range series[n] {
				series[n][i].Y /= 1 << 20
			}
		}
	}
	if len(nodes) == 0 {
		return nil, "no proc.csv rows and no process_resident_memory_bytes samples"
	}
	p := page.NewPlot("Resident memory ("+src+")", timeAxis, "RSS (MiB)")
	p.Title.Text += " " + r.drawNodes(p, nodes, series, true)
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

func plotCPU(r *run) (*plot.Plot, string) {
	nodes, series := r.procSeries(func(prev, cur procRow) (float64, bool) {
		dt := float64(cur.timeNs-prev.timeNs) / 1e9
		if prev.timeNs == 0 || dt <= 0 || cur.cpuSec < prev.cpuSec {
			return 0, false // first row, or a restarted process
		}
		return 100 * (cur.cpuSec - prev.cpuSec) / dt, true
	})
	if len(nodes) == 0 {
		return nil, "fewer than two proc.csv rows per process"
	}
	p := page.NewPlot("CPU (proc.csv)", timeAxis, "CPU (% of one core)")
	nodes = r.drawLoadRunner(p, nodes, series) // runviews.go
	p.Title.Text += " " + r.drawNodes(p, nodes, series, false)
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

func plotLoad1(r *run) (*plot.Plot, string) {
	if len(r.host) == 0 {
		return nil, "no host.csv rows"
	}
	xy := make(plotter.XYs, len(r.host))
	cpus := 0
	for i, h := range r.host {
		xy[i] = plotter.XY{X: r.sec(h.timeNs), Y: h.load1}
		cpus = max(cpus, h.cpus)
	}
	title, legend := "Host load1 (host.csv)", "load1"
	if len(r.machines) > 0 {
		// A swarm run: the harness's machine and each machine of the
		// swarm, as its exporter reported it (issue 32 item 7).
		title, legend = "Load1 per machine (host.csv, machines.csv)", "load1 harness"
	}
	p := page.NewPlot(title, timeAxis, "load average, 1 min (runnable tasks)")
	l, _ := plotter.NewLine(xy)
	l.Color = plotutil.Color(0)
	l.Width = vg.Points(1.5)
	p.Add(l)
	page.AddLegend(p, legend, l)
	for k, name := range slices.Sorted(maps.Keys(r.machines)) {
		rows := r.machines[name]
		mxy := make(plotter.XYs, len(rows))
		for i, h := range rows {
			mxy[i] = plotter.XY{X: r.sec(h.timeNs), Y: h.load1}
			cpus = max(cpus, h.cpus)
		}
		ml, _ := plotter.NewLine(mxy)
		ml.Color = plotutil.Color(k + 1)
		ml.Width = vg.Points(1)
		p.Add(ml)
		page.AddLegend(p, "load1 "+name, ml)
	}
	if cpus > 0 {
		c, _ := plotter.NewLine(plotter.XYs{{X: xy[0].X, Y: float64(cpus)}, {X: xy[len(xy)-1].X, Y: float64(cpus)}})
		c.Color = color.Gray{Y: 96}
		c.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(c)
		page.AddLegend(p, fmt.Sprintf("CPUs (%d)", cpus), c)
	}
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

// --- events on the time axis ---

// markedEvent reports whether an event is drawn on the time plots: node
// lifecycle and load start/stop. All events are in the table.
func markedEvent(kind string) bool {
	return strings.HasPrefix(kind, "node_") || strings.HasPrefix(kind, "load_")
}

func eventColor(kind string) color.Color {
	switch {
	case strings.HasPrefix(kind, "load_"):
		return color.RGBA{R: 0x1b, G: 0x9e, B: 0x4b, A: 0xff}
	case strings.Contains(kind, "exit") || strings.Contains(kind, "crash") || strings.Contains(kind, "kill") ||
		strings.Contains(kind, "stop") || strings.Contains(kind, "restart"):
		return color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	default:
		return color.Gray{Y: 150}
	}
}

// eventMarks draws a vertical line across the data area at each event time.
// It has no data range, so it never stretches the axes.
type eventMarks struct {
	xs     []float64
	colors []color.Color
}

func (m eventMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for i, x := range m.xs {
		X := trX(x)
		if X < c.Min.X || X > c.Max.X {
			continue
		}
		c.StrokeLine2(draw.LineStyle{Color: m.colors[i], Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}},
			X, c.Min.Y, X, c.Max.Y)
	}
}

// Thumbnail draws the legend entry.
func (m eventMarks) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 100}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}},
		x, c.Min.Y, x, c.Max.Y)
}

func (r *run) markEvents(p *plot.Plot) {
	var m eventMarks
	for _, e := range r.events {
		if markedEvent(e.Kind) {
			m.xs = append(m.xs, r.sec(e.Time.UnixNano()))
			m.colors = append(m.colors, eventColor(e.Kind))
		}
	}
	if len(m.xs) > 0 {
		p.Add(m)
		page.AddLegend(p, "events (see table)", m)
	}
}

// blockLatencies is the mean latency of each block's committed txs against
// the block's time in seconds since t0, in height order.
func (r *run) blockLatencies(t0 int64) plotter.XYs {
	btime := map[int64]int64{}
	for _, b := range r.blocks {
		btime[b.height] = b.timeNs
	}
	sum, n := map[int64]float64{}, map[int64]int{}
	for _, t := range r.txs {
		if t.state != "committed" || !t.hasLatency {
			continue
		}
		sum[t.height] += t.latency
		n[t.height]++
		if _, ok := btime[t.height]; !ok && t.blockTimeNs > 0 {
			btime[t.height] = t.blockTimeNs
		}
	}
	heights := make([]int64, 0, len(n))
	for h := range n {
		heights = append(heights, h)
	}
	sort.Slice(heights, func(i, j int) bool { return heights[i] < heights[j] })
	xy := make(plotter.XYs, 0, len(heights))
	for _, h := range heights {
		xy = append(xy, plotter.XY{X: float64(btime[h]-t0) / 1e9, Y: sum[h] / float64(n[h])})
	}
	return xy
}
