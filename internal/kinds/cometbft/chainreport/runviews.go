package chainreport

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The run-level views of issue 23: tm-bench's per-second statistics,
// the raw heights and cumulative txs of every run, the p2p traffic per
// node (CometBFT v1's headline was bandwidth), the mempool size limit and
// the load runner's CPU apart from the nodes'.

func init() {
	for i := range figures {
		switch figures[i].name {
		case "mempool_size", "mempool_total":
			figures[i].what += " The red dashed line is the nodes' `mempool.size` (times the node count on the sum), where a node starts refusing txs; the legend says \"off scale\" when the data stay below a quarter of it. [Time at capacity](#run-rates) is in the summary."
		case "cpu":
			figures[i].what += " The load runner (the harness) is the thick black dashed line, apart from the nodes; its average and peak over the load are in the [summary](#run-rates)."
		}
	}
	for _, c := range []string{"p2p_message_send_bytes_total", "p2p_message_receive_bytes_total",
		"p2p_peer_send_bytes_total", "p2p_peer_receive_bytes_total"} {
		nodeMetrics[c] = true
	}
	insertFigures("rounds",
		figure{"height", "Height per node",
			"The raw cometbft_consensus_height of every node as scraped: parallel steps are a healthy chain; a flat line is a node that stopped committing, a steeper one a node catching up.",
			perNodeMetric("consensus_height", "height", false)},
		figure{"total_txs", "Committed transactions, cumulative",
			"cometbft_consensus_total_txs of every node: the txs committed since genesis. Its slope is the committed rate; it should rise at the offered load while the load runs and stay flat after.",
			perNodeMetric("consensus_total_txs", "txs since genesis", false)},
	)
	insertFigures("latency_per_block",
		figure{"latency_vs_send", "Latency of every tx against its send time",
			"One dot per committed tx (Tendermint v0.34 QA's view): its latency against when it was sent. Horizontal bands are txs waiting for the same block; a band that climbs means the mempool is backing up. Zoom with `benchnet report -o DIR --xrange 10s:20s --yrange 0:2s`.",
			plotLatencyVsSend},
	)
	insertFigures("block_size",
		figure{"p2p_bytes", "P2P bytes per node, cumulative",
			"Bytes each node sent (solid) and received (dashed) over p2p since its first scrape, summed over message types (v0.38, v1: cometbft_p2p_message_*_bytes_total) or peers and channels (v0.34: cometbft_p2p_peer_*_bytes_total). Summary: [bytes per committed tx](#run-rates).",
			plotP2PBytes},
		figure{"p2p_rate", "P2P traffic rate per node",
			"The same counters' rate between scrapes, in KiB/s sent (solid) and received (dashed): it grows with the load (txs gossiped to every peer, block parts, votes); a node far above the others relays for them.",
			plotP2PRate},
	)
}

// insertFigures puts figs into the report's figure list after the figure
// named after (at the end when there is none).
func insertFigures(after string, figs ...figure) {
	for i, f := range figures {
		if f.name == after {
			figures = append(figures[:i+1], append(figs, figures[i+1:]...)...)
			return
		}
	}
	figures = append(figures, figs...)
}

// rawBlocks is blocks.csv as analyze reads it.
func (r *run) rawBlocks() []rundir.Block {
	out := make([]rundir.Block, len(r.blocks))
	for i, b := range r.blocks {
		out[i] = rundir.Block{Height: b.height, TimeNs: b.timeNs, NumTxs: b.numTxs, RunTxs: b.runTxs, SizeBytes: b.sizeBytes}
	}
	return out
}

func (r *run) firstSentNs() int64 {
	var t int64
	for _, x := range r.txs {
		if x.sentNs > 0 && (t == 0 || x.sentNs < t) {
			t = x.sentNs
		}
	}
	return t
}

// p2pSamples are the p2p byte counters of every node, named with the
// namespace "ns" for analysis.P2PSeries.
func (r *run) p2pSeries() (metric string, sent, recv map[string][]analysis.CumPoint) {
	var ss []rundir.Sample
	for _, k := range page.SortedKeys(r.samples) {
		if !analysis.IsP2PCounter(k) {
			continue
		}
		for _, s := range r.samples[k] {
			s.Metric = "ns_" + k
			ss = append(ss, s)
		}
	}
	return analysis.P2PSeries(ss, func(string) string { return "ns" })
}

// perSecond, p2pTraffic and mempoolCapacity are results.json's, or
// computed from the run directory the same way for a results.json that
// predates them.
func (r *run) perSecond() *rundir.PerSecond {
	if r.results != nil && r.results.PerSecond != nil {
		return r.results.PerSecond
	}
	bpm := 0.0
	if r.results != nil && r.results.BlockStats.AvgBlockSec > 0 {
		bpm = 60 / r.results.BlockStats.AvgBlockSec
	}
	return analysis.PerSecondStats(r.rawBlocks(), bpm)
}

func (r *run) window() (from, to int64, ok bool) {
	return analysis.P2PWindow(r.events, r.firstSentNs(), r.rawBlocks())
}

func (r *run) p2pTraffic() *rundir.P2PTraffic {
	if r.results != nil && r.results.P2P != nil {
		return r.results.P2P
	}
	from, to, ok := r.window()
	if !ok || r.results == nil {
		return nil
	}
	var ss []rundir.Sample
	for _, k := range page.SortedKeys(r.samples) {
		if analysis.IsP2PCounter(k) {
			for _, s := range r.samples[k] {
				s.Metric = "ns_" + k
				ss = append(ss, s)
			}
		}
	}
	t := analysis.P2PTraffic(ss, func(string) string { return "ns" }, from, to, r.results.Accounting.Committed)
	return t
}

func (r *run) mempoolCapacity() *rundir.MempoolCapacity {
	if r.results != nil && r.results.MempoolCapacity != nil {
		return r.results.MempoolCapacity
	}
	from, to, ok := r.window()
	if !ok {
		return nil
	}
	ms := make([]rundir.MempoolSample, len(r.mempool))
	for i, m := range r.mempool {
		ms[i] = rundir.MempoolSample{TimeNs: m.timeNs, Node: m.node, Size: int(m.value)}
	}
	return analysis.AtCapacity(r.plan, ms, from, to)
}

// runRates is the section after the summary: tm-bench's per-second table,
// blocks per minute, p2p bytes per committed tx, the share of time at the
// mempool's limit and the CPU of the load runner vs the nodes.
func (r *run) runRates() []page.Block {
	if r.results == nil {
		return nil // the summary says why
	}
	bs := []page.Block{page.Heading{Level: 3, Text: "Rates per second, traffic, capacity", ID: "run-rates"}}
	if ps := r.perSecond(); ps != nil {
		bs = append(bs, page.Para{Text: fmt.Sprintf("tm-bench's statistics over the %d whole seconds from the first block holding a run tx through the last, "+
			"each block counted in the second of its header time (all its txs), empty seconds included.", ps.Seconds)},

			page.Table{Head: []string{"per second", "avg", "stddev", "max"}, Rows: [][]string{
				{"txs/sec", page.F(ps.Txs.Avg, 1), page.F(ps.Txs.Std, 1), page.F(ps.Txs.Max, 0)},
				{"blocks/sec", page.F(ps.Blocks.Avg, 3), page.F(ps.Blocks.Std, 3), page.F(ps.Blocks.Max, 0)},
			}},
		)
	} else {
		bs = append(bs, page.NoData{Reason: "fewer than two blocks hold run txs: no per-second statistics"})
	}
	rows := [][]string{}
	if ps := r.perSecond(); ps != nil && ps.BlocksPerMin > 0 {
		rows = append(rows, []string{"blocks per minute", page.F(ps.BlocksPerMin, 1) + " (60 / average block interval)"})
	}
	if t := r.p2pTraffic(); t != nil {
		rows = append(rows,
			[]string{"p2p bytes per committed tx", page.F(t.BytesPerTx, 0) + fmt.Sprintf(" (%s sent by all nodes over %s s, %s)",
				fmtBytes(t.SentBytes), page.F(float64(t.ToNs-t.FromNs)/1e9, 1), r.nsPrefix()+t.Metric)},
			[]string{"p2p bytes received", fmtBytes(t.ReceivedBytes)})
	} else {
		rows = append(rows, []string{"p2p bytes per committed tx", "no p2p byte counters in " + rundir.SamplesCSV.Name})
	}
	if c := r.mempoolCapacity(); c != nil {
		src := "the releases' default"
		if c.Source == "config" {
			src = "`mempool.size` of the manifest"
		}
		rows = append(rows, []string{"time at mempool capacity", fmt.Sprintf("%s %% (%d of %d poller rounds during the load with a node at ≥ %d txs, %s)",
			page.F(100*c.Share, 1), c.AtCap, c.Rounds, c.Limit, src)})
	}
	if m := r.results.MempoolReach; m != nil {
		rows = append(rows, []string{"mempool reach", reachRow(m)})
	}
	if p := r.results.ProposalTiming; p != nil {
		rows = append(rows, []string{"proposal delay (receive − proposal timestamp)", fmt.Sprintf(
			"p50 %s ms, p99 %s ms, mean %s ms over %d proposals received by %d nodes during the load; %d untimely by PBTS's rule (%s, buckets interpolated)",
			page.F(p.P50Ms, 0), page.F(p.P99Ms, 0), page.F(p.MeanMs, 0), p.Proposals, p.Nodes, p.Untimely, r.nsPrefix()+analysis.ProposalTimestampDifference)})
	}
	if len(rows) > 0 {
		bs = append(bs, page.Table{Head: []string{"measure", "value"}, Rows: rows})
	}
	return append(bs, r.cpuTable()...)
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return page.F(b/(1<<30), 2) + " GiB"
	case b >= 1<<20:
		return page.F(b/(1<<20), 2) + " MiB"
	case b >= 1<<10:
		return page.F(b/(1<<10), 1) + " KiB"
	}
	return page.F(b, 0) + " B"
}

// cpuTable: each process's CPU (% of one core) over the load, the load
// runner (the harness, benchnet) apart from the nodes.
func (r *run) cpuTable() []page.Block {
	from, to, ok := r.window()
	if !ok {
		return nil
	}
	type acc struct {
		first, last procRow
		n           int
		peak        float64
	}
	by := map[string]*acc{}
	prev := map[string]procRow{}
	for _, p := range r.proc {
		pr, had := prev[p.node]
		prev[p.node] = p
		if p.timeNs < from || p.timeNs > to {
			continue
		}
		a := by[p.node]
		if a == nil {
			a = &acc{first: p}
			if had {
				a.first = pr
			}
			by[p.node] = a
		}
		if had && p.timeNs > pr.timeNs && p.cpuSec >= pr.cpuSec {
			a.peak = math.Max(a.peak, 100*(p.cpuSec-pr.cpuSec)/(float64(p.timeNs-pr.timeNs)/1e9))
		}
		a.last = p
		a.n++
	}
	if len(by) == 0 {
		return nil
	}
	t := page.Table{Head: []string{"process", "role", "CPU avg (% of a core)", "CPU max"}}
	var nodes float64
	names := page.SortedKeys(by)
	sort.SliceStable(names, func(i, j int) bool { return (r.roleOf(names[i]) == harnessRole) && r.roleOf(names[j]) != harnessRole })
	for _, n := range names {
		a := by[n]
		dt := float64(a.last.timeNs-a.first.timeNs) / 1e9
		avg := "-"
		if dt > 0 && a.last.cpuSec >= a.first.cpuSec {
			v := 100 * (a.last.cpuSec - a.first.cpuSec) / dt
			avg = page.F(v, 1)
			if r.roleOf(n) != harnessRole {
				nodes += v
			}
		}
		role := r.roleOf(n)
		if role == harnessRole {
			role = "**load runner** (harness)"
		}
		t.Rows = append(t.Rows, []string{n, role, avg, page.F(a.peak, 1)})
	}
	t.Rows = append(t.Rows, []string{"all nodes", "sum", page.F(nodes, 1), ""})
	return []page.Block{page.Para{Text: "CPU per process during the load (proc.csv, from the load's start to the last block holding a run tx): the load runner is the harness process itself (pacer, transports, collectors), drawn black and dashed on the [CPU plot](#plots)."}, t}
}

// --- p2p plots ---

func p2pXY(r *run, s []analysis.CumPoint, scale float64) plotter.XYs {
	xy := make(plotter.XYs, len(s))
	for i, p := range s {
		xy[i] = plotter.XY{X: r.sec(p.TimeNs), Y: p.Value / scale}
	}
	return xy
}

func p2pRateXY(r *run, s []analysis.CumPoint) plotter.XYs {
	var xy plotter.XYs
	for i := 1; i < len(s); i++ {
		if dt := float64(s[i].TimeNs-s[i-1].TimeNs) / 1e9; dt > 0 {
			xy = append(xy, plotter.XY{X: r.sec(s[i].TimeNs), Y: (s[i].Value - s[i-1].Value) / dt / 1024})
		}
	}
	return xy
}

func plotP2P(r *run, rate bool) (*plot.Plot, string) {
	metric, sent, recv := r.p2pSeries()
	if metric == "" {
		return nil, "no " + r.nsPrefix() + "p2p_message_send_bytes_total or " + r.nsPrefix() + "p2p_peer_send_bytes_total samples in metrics/" + collect.SamplesFile
	}
	title, unit := "P2P bytes since the first scrape ("+r.nsPrefix()+strings.TrimSuffix(metric, "send_bytes_total")+"{send,receive}_bytes_total)", "MiB"
	if rate {
		title, unit = "P2P traffic rate ("+r.nsPrefix()+strings.TrimSuffix(metric, "send_bytes_total")+"{send,receive}_bytes_total)", "KiB/s"
	}
	p := page.NewPlot(title, timeAxis, unit)
	nodes := page.SortedKeys(sent)
	for _, n := range page.SortedKeys(recv) {
		if _, ok := sent[n]; !ok {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	series := func(m map[string][]analysis.CumPoint) map[string]plotter.XYs {
		out := map[string]plotter.XYs{}
		for _, n := range nodes {
			if rate {
				out[n] = p2pRateXY(r, m[n])
			} else {
				out[n] = p2pXY(r, m[n], 1<<20)
			}
		}
		return out
	}
	s, rc := series(sent), series(recv)
	if len(nodes) > maxNodeLines {
		// By role, sent only: received mirrors it over the whole testnet.
		var keep []string
		for _, n := range nodes {
			if len(s[n]) > 0 {
				keep = append(keep, n)
			}
		}
		p.Title.Text += ", sent by role"
		r.drawNodes(p, keep, s, false)
	} else {
		for i, n := range nodes {
			for j, xy := range []plotter.XYs{s[n], rc[n]} {
				l, err := plotter.NewLine(xy)
				if err != nil {
					continue
				}
				l.Color = plotutil.Color(i)
				l.Width = vg.Points(1.2)
				if j == 1 {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				} else {
					page.AddLegend(p, n, l)
				}
				p.Add(l)
			}
		}
		if len(nodes) > 0 {
			l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
			l.Color = color.Gray{Y: 80}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			page.AddLegend(p, "dashed: received", l)
		}
	}
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

func plotP2PBytes(r *run) (*plot.Plot, string) { return plotP2P(r, false) }
func plotP2PRate(r *run) (*plot.Plot, string)  { return plotP2P(r, true) }

// --- mempool limit ---

// mempoolLimitLine draws `mempool.size` on a mempool plot when the data
// reach a quarter of it; further off, the legend names it without
// squashing the data under an axis stretched to the limit.
func (r *run) mempoolLimitLine(p *plot.Plot, scale int, dataMax float64) {
	limit, src := analysis.MempoolLimit(r.plan)
	y := float64(limit * scale)
	name := fmt.Sprintf("mempool.size = %d (%s)", limit, src)
	if scale > 1 {
		name = fmt.Sprintf("%d × mempool.size = %d (%s)", scale, limit*scale, src)
	}
	l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: 0, Y: y}})
	l.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	l.Width = vg.Points(1.5)
	l.Dashes = []vg.Length{vg.Points(8), vg.Points(3)}
	if dataMax >= y/4 {
		p.Add(hline{y: y, style: l.LineStyle})
	} else {
		name += ", off scale"
	}
	page.AddLegend(p, name, l)
}

// hline is a horizontal line across the data area with a data range of
// its y only (it never stretches the time axis).
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	Y := trY(h.y)
	if Y < c.Min.Y || Y > c.Max.Y {
		return // zoomed off
	}
	c.StrokeLine2(h.style, c.Min.X, Y, c.Max.X, Y)
}

func (h hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

func maxOfY(xy plotter.XYs) float64 {
	m := 0.0
	for _, p := range xy {
		m = math.Max(m, p.Y)
	}
	return m
}

// drawLoadRunner draws the harness's CPU (the load runner) as a thick
// black dashed line of its own and returns the other processes.
func (r *run) drawLoadRunner(p *plot.Plot, nodes []string, series map[string]plotter.XYs) []string {
	var rest []string
	for _, n := range nodes {
		if r.roleOf(n) != harnessRole {
			rest = append(rest, n)
			continue
		}
		l, err := plotter.NewLine(series[n])
		if err != nil {
			continue
		}
		l.Color = color.Black
		l.Width = vg.Points(2.5)
		l.Dashes = []vg.Length{vg.Points(7), vg.Points(3)}
		p.Add(l)
		page.AddLegend(p, "load runner ("+n+" harness)", l)
	}
	return rest
}

// plotLatencyVsSend: every committed tx's latency against its send time.
func plotLatencyVsSend(r *run) (*plot.Plot, string) {
	var xy plotter.XYs
	for _, t := range r.txs {
		if t.state == "committed" && t.hasLatency {
			xy = append(xy, plotter.XY{X: r.sec(t.sentNs), Y: t.latency})
		}
	}
	if len(xy) == 0 {
		return nil, "no committed tx with a latency in txs.csv"
	}
	p := page.NewPlot(fmt.Sprintf("Latency against send time, %d committed txs (%s)", len(xy), r.latencyBlockName()),
		timeAxis+" — send time", "latency (ms)")
	s, _ := plotter.NewScatter(xy)
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(1.5)
	if len(xy) > 2000 {
		s.GlyphStyle.Radius = vg.Points(1)
	}
	if len(xy) > 20000 {
		s.GlyphStyle.Radius = vg.Points(0.6)
	}
	s.GlyphStyle.Color = plotutil.Color(0)
	p.Add(s)
	p.Y.Min = math.Min(0, minY(xy))
	r.markEvents(p)
	return p, ""
}

func minY(xy plotter.XYs) float64 {
	m := math.Inf(1)
	for _, p := range xy {
		m = math.Min(m, p.Y)
	}
	return m
}

// reachRow: the single-node load's propagation, every node's reach after
// the slowest (Initia's gossip-propagation test, at the poller's
// resolution).
func reachRow(m *rundir.MempoolReach) string {
	ms := func(v float64) string {
		if v < 0 {
			return "never"
		}
		return page.F(v, 0) + " ms"
	}
	var per []string
	for _, n := range m.Nodes {
		per = append(per, n.Node+" "+ms(n.ReachMs))
	}
	late := ""
	if len(m.Late) > 0 {
		late = "; left out, joined during the load: " + strings.Join(m.Late, ", ")
	}
	return fmt.Sprintf("every polled mempool held a tx %s after the first send to %s (poller interval %s ms, the resolution; per node: %s%s)",
		ms(m.AllMs), m.Target, page.F(m.PollMs, 0), strings.Join(per, ", "), late)
}
