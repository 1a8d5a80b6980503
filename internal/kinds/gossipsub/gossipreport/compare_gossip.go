package gossipreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// gossipView: a gossip comparison, the Whiteblock report's series (one
// variant per m, delay, loss …): its headline table and MDR table, and
// the dissemination-time and hop histograms overlaid across variants,
// each variant's valid runs pooled. Invalid runs are listed, never drawn:
// their publisher or machine, not the protocol, set their figures.
type gossipView struct {
	idx  *rundir.CompareIndex
	runs map[string][]*gossipRun // variant -> its done runs, in run order
	byRD map[string]*gossipRun   // CompareRun.RunDir -> run
}

func newGossipView(idx *rundir.CompareIndex) report.CompareView {
	return &gossipView{idx: idx, runs: map[string][]*gossipRun{}, byRD: map[string]*gossipRun{}}
}

func (g *gossipView) Add(r rundir.CompareRun, dir string) error {
	gr, err := loadGossip(dir)
	if err != nil {
		return err
	}
	gr.label = r.Variant
	g.runs[r.Variant] = append(g.runs[r.Variant], gr)
	g.byRD[r.RunDir] = gr
	return nil
}

// valid are a variant's valid runs.
func (g *gossipView) valid(v string) []*gossipRun {
	var out []*gossipRun
	for _, r := range g.runs[v] {
		if r.res.Valid {
			out = append(out, r)
		}
	}
	return out
}

// pooled is one variant's valid runs as one: deliveries and hop counts
// summed, so each histogram is the share over all of them.
func (g *gossipView) pooled() []*gossipRun {
	var out []*gossipRun
	for _, v := range g.idx.Variants {
		runs := g.valid(v)
		if len(runs) == 0 {
			continue
		}
		p := &gossipRun{label: v, plan: runs[0].plan, res: &rundir.Results{Valid: true, Gossip: &rundir.GossipResults{}}}
		pg := p.res.Gossip
		for _, r := range runs {
			p.dissemMs = append(p.dissemMs, r.dissemMs...)
			p.lastMs = append(p.lastMs, r.lastMs...)
			rg := r.res.Gossip
			pg.LastDeliveryHopHist = addHist(pg.LastDeliveryHopHist, rg.LastDeliveryHopHist)
			pg.MaxHopHist = addHist(pg.MaxHopHist, rg.MaxHopHist)
			pg.Messages += rg.Messages
			pg.Expected += rg.Expected
			pg.Delivered += rg.Delivered
			pg.DroppedRPC += rg.DroppedRPC
			pg.Undeliverable += rg.Undeliverable
			for k, n := range rg.Missing {
				if pg.Missing == nil {
					pg.Missing = map[string]int{}
				}
				pg.Missing[k] += n
			}
		}
		out = append(out, p)
	}
	return out
}

func addHist(a, b []int) []int {
	for len(a) < len(b) {
		a = append(a, 0)
	}
	for i, c := range b {
		a[i] += c
	}
	return a
}

func (g *gossipView) summary(v string) rundir.VariantSummary {
	for _, s := range g.idx.Summary {
		if s.Variant == v {
			return s
		}
	}
	return rundir.VariantSummary{Variant: v}
}

func (g *gossipView) Variants() []page.Block {
	base := g.summary(g.idx.Base)
	cell := func(s rundir.VariantSummary, k string, prec int) string {
		if v, ok := s.Values[k]; ok {
			return page.F(v, prec)
		}
		return "—"
	}
	vs := func(s rundir.VariantSummary, k string) string {
		if s.Variant == g.idx.Base {
			return "base"
		}
		b, okB := base.Values[k]
		v, okV := s.Values[k]
		return report.CmpDelta(b, v, okB, okV)
	}
	t := page.Table{Head: []string{"variant", "valid runs", "topology, links", "MDR %", "vs base", "dissemination mean (ms)", "vs base", "p50", "p99", "vs base",
		"last delivery p99 (ms)", "last-delivery hop", "max hop", "duplicates", "host CPU avg (%)", "host RSS max (MiB)"}}
	for _, v := range g.idx.Variants {
		s := g.summary(v)
		topo := "?"
		if len(g.runs[v]) > 0 {
			topo = g.runs[v][0].topology()
		}
		t.Rows = append(t.Rows, []string{v, fmt.Sprintf("%d of %d", len(g.valid(v)), len(g.runs[v])), topo,
			cell(s, "mdr", 3), vs(s, "mdr"), cell(s, "dissemination_avg", 1), vs(s, "dissemination_avg"),
			cell(s, "dissemination_p50", 1), cell(s, "dissemination_p99", 1), vs(s, "dissemination_p99"),
			cell(s, "last_delivery_p99", 1), cell(s, "last_delivery_hop", 2), cell(s, "max_hop", 2), cell(s, "duplicates", 2),
			cell(s, "host_cpu_avg", 1), cell(s, "host_rss_max", 1)})
	}
	out := []page.Block{
		page.Para{Text: "Means over each variant's valid runs (the Whiteblock report's figures); \"vs base\" is the change against the base's mean. " +
			"MDR = deliveries / (messages × (N − 1)); dissemination is publish → each delivery (Whiteblock's TotalNanoTime); " +
			"last-delivery hop is the depth of each message's last delivery in its first-delivery tree, max hop the tree's depth " +
			"(the longest sender-to-recipient chain, Whiteblock's \"last delivery hop\"); duplicates are copies after the first per delivery."},

		t,
		page.Heading{Level: 3, Text: "Message delivery ratio", ID: "mdr"},
	}
	mt := page.Table{Head: []string{"variant", "messages", "expected deliveries", "delivered", "MDR %", "missing by reason", "dropped RPCs", "undeliverable"}}
	for _, p := range g.pooled() {
		r := p.res.Gossip
		var miss []string
		for _, k := range page.SortedKeys(r.Missing) {
			miss = append(miss, fmt.Sprintf("%s %d", k, r.Missing[k]))
		}
		mdr := "—"
		if r.Expected > 0 {
			mdr = page.F(100*float64(r.Delivered)/float64(r.Expected), 3)
		}
		mt.Rows = append(mt.Rows, []string{p.label, page.Itoa(r.Messages), page.Itoa(r.Expected), page.Itoa(r.Delivered), mdr,
			page.DashIfEmpty(strings.Join(miss, ", ")), page.Itoa(r.DroppedRPC), page.Itoa(r.Undeliverable)})
	}
	if len(mt.Rows) == 0 {
		return append(out, page.NoData{Reason: "no valid run"})
	}
	return append(out, page.Para{Text: "Summed over each variant's valid runs; every missing delivery attributed where the traces allow."}, mt)
}

func (g *gossipView) PlotsIntro() string {
	return "Each variant's valid runs pooled; histograms as shares, so variants with different message counts overlay."
}

func (g *gossipView) Figures() []report.CompareFigure {
	pool := g.pooled()
	return []report.CompareFigure{
		{Name: "cmp_gossip_dissemination", Title: "Dissemination time, overlaid",
			What: "Share of deliveries per bin of publish → delivery time, one line per variant (Whiteblock's Graphs 3–9): an initial spike, then lobes about one link delay apart.",
			Build: func() ([]byte, string, error) {
				return overlayPNG(pool, "Dissemination time", "publish → delivery (ms)", func(r *gossipRun) []float64 { return r.dissemMs })
			}},
		{Name: "cmp_gossip_dissemination_log", Title: "Dissemination time, log scale",
			What: "The same deliveries on log-spaced bins up to the slowest: the spike and every variant's tail.",
			Build: func() ([]byte, string, error) {
				return logOverlayPNG(pool, "Dissemination time (all deliveries)", "publish → delivery (ms)", func(r *gossipRun) []float64 { return r.dissemMs })
			}},
		{Name: "cmp_gossip_last_delivery", Title: "Time to the last delivery, overlaid",
			What: "Share of messages per bin of publish → last delivery: how long a message takes to reach every host.",
			Build: func() ([]byte, string, error) {
				return overlayPNG(pool, "Time to the last delivery", "publish → last delivery (ms)", func(r *gossipRun) []float64 { return r.lastMs })
			}},
		{Name: "cmp_gossip_last_delivery_hop", Title: "Last-delivery hop, overlaid",
			What: "Share of messages per depth of their last delivery in the delivery tree.",
			Build: func() ([]byte, string, error) {
				return hopPNG(pool, "Last-delivery hop (delivery tree)", func(r *rundir.GossipResults) []int { return r.LastDeliveryHopHist })
			}},
		{Name: "cmp_gossip_max_hop", Title: "Max hop (Whiteblock's last-delivery hop), overlaid",
			What: "Share of messages per depth of their delivery tree: the longest sender-to-recipient chain, the report's Graph 2.",
			Build: func() ([]byte, string, error) {
				return hopPNG(pool, "Max hop (longest chain)", func(r *rundir.GossipResults) []int { return r.MaxHopHist })
			}},
		{Name: "cmp_gossip_cpu", Title: "CPU per host",
			What: "Average CPU of each host over the run (% of one core), one line per variant (its first valid run), hosts in plan order; dashed: the harness's own average.",
			Build: func() ([]byte, string, error) {
				return g.perHostPNG("CPU per host", "CPU avg (% of one core)", func(p rundir.ProcStats) float64 { return p.CPUAvgPct }, true)
			}},
		{Name: "cmp_gossip_rss", Title: "Resident memory per host",
			What: "Largest RSS of each host, one line per variant (its first valid run).",
			Build: func() ([]byte, string, error) {
				return g.perHostPNG("Resident memory per host", "RSS max (MiB)", func(p rundir.ProcStats) float64 { return p.RSSMaxMB }, false)
			}},
	}
}

// overlayPNG draws the histogram overlay on a linear axis up to the upper
// median of the variants' p99.9: one variant's tail of late deliveries
// would squash every other variant's spike into the first bin (the log
// plot shows the tails); the title says how much lies beyond.
func overlayPNG(runs []*gossipRun, title, x string, values func(*gossipRun) []float64) ([]byte, string, error) {
	var tails []float64
	for _, r := range runs {
		if v := values(r); len(v) > 0 {
			s := slices.Clone(v)
			slices.Sort(s)
			tails = append(tails, page.Percentile(s, 0.999))
		}
	}
	if len(tails) == 0 {
		return nil, "no valid run with a delivered message", nil
	}
	slices.Sort(tails)
	hi := tails[len(tails)/2]
	total, beyond := 0, 0
	var clipped []*gossipRun
	for _, r := range runs {
		c := &gossipRun{label: r.label, res: r.res}
		for _, x := range values(r) {
			total++
			if x > hi {
				beyond++
				continue
			}
			c.dissemMs = append(c.dissemMs, x)
		}
		clipped = append(clipped, c)
	}
	p, reason := histOverlay(clipped, title, x, func(r *gossipRun) []float64 { return r.dissemMs })
	if p == nil {
		return nil, "no valid run with a delivered message: " + reason, nil
	}
	if beyond > 0 {
		p.Title.Text += fmt.Sprintf(" (%d of %d beyond %s ms: log plot)", beyond, total, page.Ms(hi))
	}
	p.Legend.Top = true
	b, err := page.RenderPNG(p)
	return b, "", err
}

// logOverlayPNG draws every value on 60 log-spaced bins from 0.1 ms (or
// the smallest value) to the largest: spikes and tails of all variants.
func logOverlayPNG(runs []*gossipRun, title, x string, values func(*gossipRun) []float64) ([]byte, string, error) {
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		for _, v := range values(r) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi <= 0 {
		return nil, "no valid run with a delivered message", nil
	}
	lo = math.Max(lo, 0.1)
	hi = math.Max(hi, lo*10)
	const bins = 60
	step := math.Log(hi/lo) / bins
	p := page.NewPlot(title, x+", log scale", "share (%)")
	for i, r := range runs {
		v := values(r)
		if len(v) == 0 {
			continue
		}
		counts := make([]float64, bins)
		for _, x := range v {
			k := 0
			if x > lo {
				k = min(int(math.Log(x/lo)/step), bins-1)
			}
			counts[k]++
		}
		var xy plotter.XYs
		for k, c := range counts {
			y := 100 * c / float64(len(v))
			xy = append(xy, plotter.XY{X: lo * math.Exp(float64(k)*step), Y: y}, plotter.XY{X: lo * math.Exp(float64(k+1)*step), Y: y})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, "", err
		}
		l.Color = plotutil.Color(i)
		l.Width = 1.5
		p.Add(l)
		page.AddLegend(p, r.label, l)
	}
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max, p.Y.Min = lo, hi, 0
	p.Legend.Top = true
	b, err := page.RenderPNG(p)
	return b, "", err
}

func hopPNG(runs []*gossipRun, title string, hist func(*rundir.GossipResults) []int) ([]byte, string, error) {
	p, reason := hopOverlay(runs, title, hist)
	if p == nil {
		return nil, "no valid run: " + reason, nil
	}
	p.Legend.Top = true
	b, err := page.RenderPNG(p)
	return b, "", err
}

func (g *gossipView) perHostPNG(title, y string, f func(rundir.ProcStats) float64, harness bool) ([]byte, string, error) {
	p := page.NewPlot(title, "host (plan order)", y)
	n := 0
	for i, v := range g.idx.Variants {
		runs := g.valid(v)
		if len(runs) == 0 {
			continue
		}
		r := runs[0].res.Gossip
		var xy plotter.XYs
		for k, h := range r.HostNodes {
			if h.Proc.Samples > 0 {
				xy = append(xy, plotter.XY{X: float64(k), Y: f(h.Proc)})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, "", err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		l.Width = vg.Points(1.2)
		p.Add(l, pts)
		page.AddLegend(p, v, l, pts)
		if harness && r.Harness != nil {
			hl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: r.Harness.CPUAvgPct}, {X: float64(len(r.HostNodes) - 1), Y: r.Harness.CPUAvgPct}})
			if err == nil {
				hl.Color = plotutil.Color(i)
				hl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				p.Add(hl)
			}
		}
		n++
	}
	if n == 0 {
		return nil, "no metrics/proc.csv samples of the hosts in any valid run", nil
	}
	p.Y.Min = 0
	p.Legend.Top = true
	b, err := page.RenderPNG(p)
	return b, "", err
}

func (g *gossipView) RunHead() []string {
	return []string{"valid", "MDR %", "dissemination mean / p99 (ms)", "last-delivery hop p50 / max", "max hop p50 / max", "publish lag p99 (ms)", "machine CPU busy"}
}

func (g *gossipView) RunCells(r rundir.CompareRun) []string {
	gr := g.byRD[r.RunDir]
	if gr == nil {
		return []string{"—", "—", "—", "—", "—", "—", "—"}
	}
	res := gr.res.Gossip
	valid := validWord(gr.res)
	if !gr.res.Valid {
		valid += ": " + strings.Join(gr.res.Invalid, "; ")
	}
	return []string{valid, page.F(100*res.MDR, 3), page.Ms(res.Dissemination.Avg) + " / " + page.Ms(res.Dissemination.P99),
		page.F(res.LastDeliveryHop.P50, 0) + " / " + page.F(res.LastDeliveryHop.Max, 0), page.F(res.MaxHop.P50, 0) + " / " + page.F(res.MaxHop.Max, 0),
		page.Ms(res.Publish.LagP99Ms), gr.machineCPU()}
}
