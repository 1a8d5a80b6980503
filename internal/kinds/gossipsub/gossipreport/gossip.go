package gossipreport

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The gossip report (issue 12): the Whiteblock gossipsub report's tables and
// plots from one run directory — headline, MDR per host with the missing
// deliveries attributed, dissemination-time histogram (Whiteblock's
// TotalNanoTime), hop histograms, CPU and RSS per host — and, across a
// series of runs, the same histograms overlaid next to a comparison table.
// It reads results.json's gossip section, deliveries.csv and plan.json.

// gossipRun is what the gossip report reads from one run directory.
type gossipRun struct {
	dir      string
	label    string
	plan     *plan.Testnet
	res      *rundir.Results
	dissemMs []float64 // every delivery: publish -> delivery (ms)
	lastMs   []float64 // every message: publish -> last delivery (ms)
	// hostPubNs is each delivered message's publish time (deliveries.csv:
	// the publishing host's trace, else the harness's ack); v the views
	// of gossip_views.go, loaded on first use.
	hostPubNs map[string]int64
	v         *gossipViews
}

// Kind is the gossip lab's run report and comparison view.
var Kind = report.Kind{Render: RenderGossip, Compare: newGossipView}

func loadGossip(runDir string) (*gossipRun, error) {
	d := &rundir.Dir{Path: runDir}
	res, err := d.ReadResults()
	if err != nil {
		return nil, fmt.Errorf("gossip report: %w", err)
	}
	if res.Gossip == nil {
		return nil, fmt.Errorf("gossip report: %s has no gossip section (run `benchnet analyze` on a gossip run)", filepath.Join(runDir, rundir.ResultsFile))
	}
	g := &gossipRun{dir: runDir, res: res, label: filepath.Base(runDir)}
	if t, err := plan.Read(runDir); err == nil {
		g.plan = t
		if t.Name != "" {
			g.label = t.Name
		}
	}
	last := map[string]int64{}
	var order []string
	var pubNs = map[string]int64{}
	f, err := os.Open(rundir.DeliveriesCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gossip report: %w", err)
	}
	if err == nil {
		f.Close()
		_, _, err = rundir.DeliveriesCSV.ReadFileFilter(rundir.DeliveriesCSV.Path(d), func(r *rundir.Delivery) bool {
			if r.State != rundir.DeliveryDelivered {
				return false
			}
			g.dissemMs = append(g.dissemMs, float64(r.DeliverNs-r.PublishNs)/1e6)
			if _, ok := last[r.MsgID]; !ok {
				order = append(order, r.MsgID)
				pubNs[r.MsgID] = r.PublishNs
			}
			last[r.MsgID] = max(last[r.MsgID], r.DeliverNs)
			return false // keep nothing: 10 M rows would not fit
		})
		if err != nil {
			return nil, fmt.Errorf("gossip report: %w", err)
		}
	}
	for _, m := range order {
		g.lastMs = append(g.lastMs, float64(last[m]-pubNs[m])/1e6)
	}
	g.hostPubNs = pubNs
	return g, nil
}

// RenderGossip writes the gossip report of runDir into outDir (runDir when
// ""): report.md, report.html and plots/. Same data, same bytes.
func RenderGossip(runDir, outDir string) ([]string, error) {
	g, err := loadGossip(runDir)
	if err != nil {
		return nil, err
	}
	if outDir == "" {
		outDir = runDir
	}
	title := "benchnet gossip report: " + g.label
	blocks, pngs, err := g.build(title)
	if err != nil {
		return nil, err
	}
	return writeReport(outDir, title, blocks, pngs)
}

// writeReport writes blocks and plots as the run report does.
func writeReport(outDir, title string, blocks []page.Block, pngs map[string][]byte) ([]string, error) {
	return page.Write("report", outDir, report.MarkdownFile, report.HTMLFile, title, blocks, pngs)
}

type gossipFigure struct {
	name, title, what string
	build             func() (*plot.Plot, string)
}

// GossipPlotTitles are the titles of the gossip report's plots, in order.
func GossipPlotTitles() []string {
	var out []string
	for _, f := range (&gossipRun{res: &rundir.Results{Gossip: &rundir.GossipResults{}}}).figures() {
		out = append(out, f.title)
	}
	return out
}

func renderFigures(figs []gossipFigure, pngs map[string][]byte) ([]page.Block, error) {
	var bs []page.Block
	for i, f := range figs {
		bs = append(bs, page.Heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.title), ID: ""})
		p, reason := f.build()
		if p == nil {
			bs = append(bs, page.NoData{Reason: reason}, page.Para{Text: "*" + f.what + "*"})
			continue
		}
		page.MakeRoom(p)
		w, err := p.WriterTo(page.W, page.H, "png")
		if err != nil {
			return nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("report: plot %s: %w", f.name, err)
		}
		pngs[f.name+".png"] = buf.Bytes()
		bs = append(bs, page.Image{Alt: f.title, File: page.PlotsDir + "/" + f.name + ".png", PNG: buf.Bytes()}, page.Para{Text: f.what})
	}
	return bs, nil
}

func (g *gossipRun) topology() string {
	if g.plan == nil {
		return "?"
	}
	s := g.plan.Topology
	switch {
	case g.plan.Network.M != 0:
		s += fmt.Sprintf(" m=%d", g.plan.Network.M)
	case g.plan.Network.Degree != 0:
		s += fmt.Sprintf(" degree=%d", g.plan.Network.Degree)
	}
	for _, c := range []struct{ k, v string }{{"delay", g.plan.Network.Delay}, {"loss", g.plan.Network.Loss}, {"bandwidth", g.plan.Network.Bandwidth}, {"zones", g.plan.Network.Zones}} {
		if c.v != "" {
			s += ", " + c.k + " " + c.v
		}
	}
	return s
}

func validWord(r *rundir.Results) string {
	if r.Valid {
		return "valid"
	}
	return "**invalid**"
}

func (g *gossipRun) build(title string) ([]page.Block, map[string][]byte, error) {
	r := g.res.Gossip
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	add(page.Heading{Level: 1, Text: title, ID: ""})
	add(report.ThresholdSection(g.res, "gossipsub")...)
	// Headline first: the verdict, then the three figures of Whiteblock's
	// report (MDR, dissemination, hops).
	verdict := "**valid**: the publisher kept its schedule (lag p99 ≤ 100 ms, ≥ 95 % of the target rate) and the machine's CPU was not saturated."
	if !g.res.Valid {
		verdict = "**INVALID — not a result**: " + strings.Join(g.res.Invalid, "; ") + "."
	}
	add(page.Para{Text: verdict})
	add(page.Table{Head: []string{"figure", "value"}, Rows: [][]string{
		{"hosts, topology", page.Itoa(r.Nodes) + ", " + g.topology()},
		{"messages published", page.Itoa(r.Messages)},
		{"MDR (deliveries / messages × (N − 1))", fmt.Sprintf("%s %% (%d of %d)", page.F(100*r.MDR, 3), r.Delivered, r.Expected)},
		{"dissemination mean / p50 / p99 / max (ms)", strings.Join([]string{page.Ms(r.Dissemination.Avg), page.Ms(r.Dissemination.P50), page.Ms(r.Dissemination.P99), page.Ms(r.Dissemination.Max)}, " / ")},
		{"last delivery per message mean / p99 / max (ms)", strings.Join([]string{page.Ms(r.LastDelivery.Avg), page.Ms(r.LastDelivery.P99), page.Ms(r.LastDelivery.Max)}, " / ")},
		{"last-delivery hop p50 / max (delivery tree)", page.F(r.LastDeliveryHop.P50, 0) + " / " + page.F(r.LastDeliveryHop.Max, 0)},
		{"max hop p50 / max (Whiteblock's: longest chain)", page.F(r.MaxHop.P50, 0) + " / " + page.F(r.MaxHop.Max, 0)},
		{"duplicates per message per host (avg / max)", page.F(r.Duplicates.Avg, 2) + " / " + page.F(r.Duplicates.Max, 0)},
		{"publish rate target / achieved (msg/s)", page.F(r.Publish.TargetRate, 1) + " / " + page.F(r.Publish.Achieved, 1)},
		{"publish lag p50 / p99 / max (ms)", strings.Join([]string{page.Ms(r.Publish.LagP50Ms), page.Ms(r.Publish.LagP99Ms), page.Ms(r.Publish.LagMaxMs)}, " / ")},
		{"harness CPU avg / max (% of one core)", g.harnessCPU()},
		{"machine CPU busy over the schedule (all cores)", g.machineCPU()},
	}})
	add(page.Heading{Level: 2, Text: "Missing deliveries", ID: "missing"})
	if len(r.Missing) == 0 {
		add(page.Para{Text: "None: every host delivered every message it did not publish."})
	} else {
		t := page.Table{Head: []string{"reason", "deliveries", "what it means"}}
		for _, k := range page.SortedKeys(r.Missing) {
			t.Rows = append(t.Rows, []string{"`" + k + "`", page.Itoa(r.Missing[k]), reasonText[k]})
		}
		add(t)
	}
	add(g.faultsSection()...)
	add(page.Para{Text: fmt.Sprintf("Trace events over the run: %d dropped RPCs, %d undeliverable (subscriber queue full), %d rejected.", r.DroppedRPC, r.Undeliverable, r.Rejected)})
	add(page.Heading{Level: 2, Text: "Message delivery ratio per host", ID: "mdr"})
	t := page.Table{Head: []string{"host", "published", "expected", "delivered", "MDR %", "missing", "duplicates avg", "CPU avg %", "CPU max %", "RSS avg MiB", "RSS max MiB", "outages"}}
	for _, n := range r.HostNodes {
		var miss []string
		for _, k := range page.SortedKeys(n.Missing) {
			miss = append(miss, fmt.Sprintf("%s %d", k, n.Missing[k]))
		}
		exited := hostOutages(n)
		t.Rows = append(t.Rows, []string{n.Name, page.Itoa(n.Published), page.Itoa(n.Expected), page.Itoa(n.Delivered), page.F(100*n.MDR, 2), page.DashIfEmpty(strings.Join(miss, ", ")),
			page.F(n.Duplicates, 2), page.F(n.Proc.CPUAvgPct, 1), page.F(n.Proc.CPUMaxPct, 1), page.F(n.Proc.RSSAvgMB, 1), page.F(n.Proc.RSSMaxMB, 1), exited})
	}
	add(t)
	add(g.publisherSection()...)
	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	pngs := map[string][]byte{}
	fb, err := renderFigures(g.figures(), pngs)
	if err != nil {
		return nil, nil, err
	}
	add(fb...)
	add(g.paramsSection()...)
	add(g.differencesSection()...)
	return bs, pngs, nil
}

// faultsSection lists the run's [[perturb]] outages (faults.json; none
// when the run had no faults), timed from the first publication's
// schedule start (events.jsonl's publish_start).
func (g *gossipRun) faultsSection() []page.Block {
	d := &rundir.Dir{Path: g.dir}
	fr, err := d.ReadFaults()
	if err != nil || len(fr.Perturbations) == 0 {
		return nil
	}
	var t0 int64
	if evs, err := d.ReadEvents(); err == nil {
		for _, e := range evs {
			if e.Kind == rundir.EventPublishStart {
				t0 = e.Time.UnixNano()
				break
			}
		}
	}
	t := page.Table{Head: []string{"#", "action", "nodes", "at s (into publishing)", "outage s"}}
	for _, p := range fr.Perturbations {
		at := "?"
		if t0 > 0 {
			at = page.F(float64(p.StartNs-t0)/1e9, 1)
		}
		outage := page.F(float64(p.EndNs-p.StartNs)/1e9, 1)
		if !p.Undone {
			outage += " (not undone)"
		}
		t.Rows = append(t.Rows, []string{page.Itoa(p.Entry), p.Action, strings.Join(p.Nodes, " "), at, outage})
	}
	return []page.Block{page.Heading{Level: 2, Text: "Faults", ID: "faults"},
		page.Para{Text: "Each [[perturb]] entry (faults.json): the outage lasts from the action until it was undone (restart, resume, heal) or the end of publishing. " +
			"Deliveries a killed or stopped host missed are `host_exited`, a paused host's `host_paused`, those between the two sides of a disconnect or partition `host_cut_off`; " +
			"those of hosts that lost their only paths through a downed host stay `never_reached`."},

		t}
}

var reasonText = map[string]string{
	"host_exited":   "the receiving host was down around its publication: it died, or a [[perturb]] step killed or stopped it (events.jsonl)",
	"host_paused":   "a [[perturb]] step had paused (SIGSTOP) the receiving host around its publication (events.jsonl node_pause until node_resume)",
	"host_cut_off":  "a [[perturb]] disconnect or partition separated the receiving host from the publisher around its publication (until node_heal)",
	"no_trace":      "the receiving host left no trace file",
	"queue_full":    "the router had it, the subscriber queue was full (undeliverable)",
	"rejected":      "the receiving host's validation rejected it",
	"dropped_rpc":   "a peer dropped an RPC carrying it toward the host (outbound queue full)",
	"never_reached": "no trace shows it reaching the host",
}

// hostOutages is the per-host table's outages cell: each interval the
// host was down, paused or cut off (results.json outages), or just
// "exited" for a results.json older than them.
func hostOutages(n rundir.GossipNode) string {
	if len(n.Outages) == 0 {
		if n.Exited {
			return "**exited**"
		}
		return ""
	}
	var parts []string
	for _, o := range n.Outages {
		what := strings.ReplaceAll(o.Cause, "_", " ")
		if o.Cause == "down" {
			what = "**down**"
		}
		sec := page.F(o.Sec, 1) + " s"
		if !o.Undone {
			sec += " (to the end)"
		}
		parts = append(parts, what+" "+sec)
	}
	return strings.Join(parts, ", ")
}

func (g *gossipRun) machineCPU() string {
	if b := g.res.Gossip.MachineBusyPct; b > 0 {
		return page.F(b, 1) + " %"
	}
	return "not sampled"
}

func (g *gossipRun) harnessCPU() string {
	h := g.res.Gossip.Harness
	if h == nil {
		return "not sampled"
	}
	return page.F(h.CPUAvgPct, 1) + " / " + page.F(h.CPUMaxPct, 1)
}

func (g *gossipRun) figures() []gossipFigure {
	one := []*gossipRun{g}
	r := g.res.Gossip
	return append([]gossipFigure{
		{"gossip_dissemination", "Dissemination time", "Deliveries per bin of publish → delivery time (Whiteblock's TotalNanoTime): an initial spike, then lobes one hop delay apart.", func() (*plot.Plot, string) {
			return histOverlay(one, "Dissemination time (every delivery)", "publish → delivery (ms)", func(g *gossipRun) []float64 { return g.dissemMs })
		}},
		{"gossip_last_delivery", "Time to the last delivery", "Messages per bin of publish → last delivery: how long a message takes to reach every host.", func() (*plot.Plot, string) {
			return histOverlay(one, "Time to the last delivery (per message)", "publish → last delivery (ms)", func(g *gossipRun) []float64 { return g.lastMs })
		}},
		{"gossip_hops", "Hops", "Messages per hop count: the depth of the last delivery in the delivery tree, and the tree's depth (Whiteblock's definition, ≥ the first); deliveries per depth.", func() (*plot.Plot, string) {
			return hopBars(r)
		}},
		{"gossip_cpu", "CPU per host", "Average and maximum CPU of each host over the run (% of one core, between proc.csv samples); a host near 100 % limits the run, not the protocol.", func() (*plot.Plot, string) {
			return perHostBars(r, "CPU (% of one core)", func(p rundir.ProcStats) (float64, float64) { return p.CPUAvgPct, p.CPUMaxPct })
		}},
		{"gossip_rss", "Resident memory per host", "Average and maximum RSS of each host.", func() (*plot.Plot, string) {
			return perHostBars(r, "RSS (MiB)", func(p rundir.ProcStats) (float64, float64) { return p.RSSAvgMB, p.RSSMaxMB })
		}},
	}, g.viewFigures()...)
}

// histOverlay draws one step line per run: the share of values per bin, on
// bins common to every run (60 bins from 0 to the largest p99.9 … max).
func histOverlay(runs []*gossipRun, title, x string, values func(*gossipRun) []float64) (*plot.Plot, string) {
	hi := 0.0
	found := false
	for _, g := range runs {
		v := values(g)
		if len(v) == 0 {
			continue
		}
		found = true
		s := slices.Clone(v)
		slices.Sort(s)
		hi = max(hi, s[len(s)-1])
	}
	if !found {
		return nil, "no delivered message in deliveries.csv"
	}
	const bins = 60
	width := niceWidth(hi / bins)
	p := page.NewPlot(title, x, "share (%)")
	for i, g := range runs {
		v := values(g)
		if len(v) == 0 {
			continue
		}
		counts := make([]float64, int(math.Floor(hi/width))+1)
		for _, x := range v {
			counts[min(max(int(math.Floor(x/width)), 0), len(counts)-1)]++
		}
		var xy plotter.XYs
		for b, c := range counts {
			y := 100 * c / float64(len(v))
			xy = append(xy, plotter.XY{X: float64(b) * width, Y: y}, plotter.XY{X: float64(b+1) * width, Y: y})
		}
		l, _ := plotter.NewLine(xy)
		l.Color = plotutil.Color(i)
		l.Width = 1.5
		p.Add(l)
		if len(runs) > 1 {
			page.AddLegend(p, g.label, l)
		}
	}
	p.X.Min, p.Y.Min = 0, 0
	return p, ""
}

// niceWidth rounds a bin width up to 1, 2 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if w <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if w <= m*e {
			return m * e
		}
	}
	return 10 * e
}

func hopOverlay(runs []*gossipRun, title string, hist func(*rundir.GossipResults) []int) (*plot.Plot, string) {
	p := page.NewPlot(title, "hops", "share of messages (%)")
	drawn := false
	for i, g := range runs {
		h := hist(g.res.Gossip)
		total := 0
		for _, c := range h {
			total += c
		}
		if total == 0 {
			continue
		}
		drawn = true
		var xy plotter.XYs
		for k, c := range h {
			xy = append(xy, plotter.XY{X: float64(k), Y: 100 * float64(c) / float64(total)})
		}
		l, pts, _ := plotter.NewLinePoints(xy)
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		p.Add(l, pts)
		page.AddLegend(p, g.label, l, pts)
	}
	if !drawn {
		return nil, "no hop counts in results.json"
	}
	p.X.Min, p.Y.Min = 0, 0
	return p, ""
}

func hopBars(r *rundir.GossipResults) (*plot.Plot, string) {
	series := []struct {
		name string
		h    []int
	}{{"last-delivery hop (messages)", r.LastDeliveryHopHist}, {"max hop (messages)", r.MaxHopHist}, {"delivery depth (deliveries)", r.DeliveryHopHist}}
	n := 0
	for _, s := range series {
		n = max(n, len(s.h))
	}
	if n == 0 {
		return nil, "no hop counts in results.json"
	}
	p := page.NewPlot("Hops", "hops", "share (%)")
	// Three bars side by side fill about 70 % of each hop's slot.
	w := page.W * 0.7 / 3 / vgFloat(float64(n+1))
	for i, s := range series {
		total := 0
		for _, c := range s.h {
			total += c
		}
		vals := make(plotter.Values, n)
		for k, c := range s.h {
			if total > 0 {
				vals[k] = 100 * float64(c) / float64(total)
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err.Error()
		}
		b.Color, b.LineStyle.Width = plotutil.Color(i), 0
		b.Offset = w * vgFloat(float64(i-1))
		p.Add(b)
		page.AddLegend(p, s.name, b)
	}
	p.Y.Min = 0
	return p, ""
}

func perHostBars(r *rundir.GossipResults, y string, f func(rundir.ProcStats) (avg, max float64)) (*plot.Plot, string) {
	sampled := 0
	avg, mx := make(plotter.Values, len(r.HostNodes)), make(plotter.Values, len(r.HostNodes))
	for i, n := range r.HostNodes {
		if n.Proc.Samples > 0 {
			sampled++
		}
		avg[i], mx[i] = f(n.Proc)
	}
	if sampled == 0 {
		return nil, "no metrics/proc.csv samples of the hosts"
	}
	p := page.NewPlot(y+" per host", "host (plan order)", y)
	w := page.W / 2 / vgFloat(float64(len(r.HostNodes)+1))
	bm, err := plotter.NewBarChart(mx, w)
	if err != nil {
		return nil, err.Error()
	}
	ba, _ := plotter.NewBarChart(avg, w)
	bm.Color, ba.Color = plotutil.Color(1), plotutil.Color(0)
	bm.LineStyle.Width, ba.LineStyle.Width = 0, 0
	p.Add(bm, ba)
	page.AddLegend(p, "max", bm)
	page.AddLegend(p, "avg", ba)
	p.Y.Min = 0
	return p, ""
}

func vgFloat(v float64) vg.Length { return vg.Length(v) }
