package gossipreport

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The Whiteblock 004 views of the gossip report (issue 23): the publisher's
// inter-arrival times and its actual against intended transmission
// timeline (004's Graphs 10 and 11, from published.csv and the hosts'
// publish times), CPU and RSS of every host over time (metrics/proc.csv),
// the parameters and the machine the hosts ran with, and where this lab and
// 004 differ, 004's own inconsistencies included.

// gossipViews is what the views read besides results.json.
type gossipViews struct {
	ts    []analysis.Transmission
	stats analysis.TimelineStats
	t0    int64 // the first intended publication: the time axis' zero
	// proc: per process, its rows in time order; harness under
	// rundir.HarnessNode.
	proc    map[string][]rundir.Proc
	machine *rundir.Machine
	linkem  *rundir.LinkemInfo
	errs    []string
}

// views loads (once) what the views read; a missing file leaves its view
// empty with a reason, an unreadable one is noted in the report.
func (g *gossipRun) views() *gossipViews {
	if g.v != nil {
		return g.v
	}
	v := &gossipViews{proc: map[string][]rundir.Proc{}}
	g.v = v
	if g.dir == "" {
		return v
	}
	d := &rundir.Dir{Path: g.dir}
	note := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			v.errs = append(v.errs, err.Error())
		}
	}
	pub, _, err := rundir.PublishedCSV.ReadFile(rundir.PublishedCSV.Path(d))
	note(err)
	v.ts = analysis.Transmissions(pub, g.hostPubNs)
	v.stats = analysis.Timeline(v.ts)
	for i, t := range v.ts {
		if i == 0 || t.Intended < v.t0 {
			v.t0 = t.Intended
		}
	}
	rows, _, err := rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d))
	note(err)
	for _, r := range rows {
		v.proc[r.Node] = append(v.proc[r.Node], r)
	}
	for _, rs := range v.proc {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].TimeNs < rs[j].TimeNs })
	}
	if v.t0 == 0 {
		for _, rs := range v.proc {
			if v.t0 == 0 || rs[0].TimeNs < v.t0 {
				v.t0 = rs[0].TimeNs
			}
		}
	}
	if m, err := d.ReadMachine(); err == nil {
		v.machine = m
	} else {
		note(err)
	}
	if info, err := d.ReadLinkemInfo(); err == nil {
		v.linkem = info
	} else {
		note(err)
	}
	return v
}

func (v *gossipViews) sec(ns int64) float64 { return float64(ns-v.t0) / 1e9 }

// publisherSection is the table behind Graphs 10 and 11.
func (g *gossipRun) publisherSection() []page.Block {
	v := g.views()
	bs := []page.Block{page.Heading{Level: 2, Text: "Publisher timeline", ID: "publisher"}}
	s := v.stats
	if s.Messages == 0 {
		return append(bs, page.Para{Text: "No message was sent (published.csv has no send time)."})
	}
	row := func(what string, gap, late rundir.Stats) []string {
		return []string{what, page.Ms(gap.Avg), page.Ms(gap.P50), page.Ms(gap.P99), page.Ms(gap.Max), page.Ms(late.P50), page.Ms(late.P99), page.Ms(late.Max)}
	}
	bs = append(bs,
		page.Para{Text: fmt.Sprintf("Whiteblock 004 found its publisher's inter-arrival times erratic and its transmissions late against the schedule (its Graphs 10 and 11). "+
			"Ours, for %d messages meant to go out every %s ms: the harness's publish requests (published.csv sent_ns) and the publishing hosts' own publish times "+
			"(deliveries.csv's publish time: the host's trace, else its ack; %d messages have none and use the ack). Gaps are between consecutive times of the whole stream; lateness is actual − intended.",
			s.Messages, page.F(s.IntendedGap, 3), s.Messages-s.Traced)},

		page.Table{Head: []string{"stream", "gap mean (ms)", "gap p50", "gap p99", "gap max", "late p50 (ms)", "late p99", "late max"}, Rows: [][]string{
			row("harness send", s.SentGap, s.SentLate),
			row("host publish", s.HostGap, s.HostLate),
		}},
	)
	return bs
}

func (g *gossipRun) viewFigures() []gossipFigure {
	return []gossipFigure{
		{"gossip_interarrival", "Publisher inter-arrival times", "Share of gaps between consecutive publications per bin (Whiteblock 004's Graph 10), for the harness's sends and the hosts' publications; the dashed line is the schedule's gap (1/rate). Gaps beyond the plot's right edge (1.25 × the larger p99, at least 1.5 × the schedule's gap) are counted in the last bin.", func() (*plot.Plot, string) {
			return g.interarrivalHist()
		}},
		{"gossip_interarrival_time", "Publisher inter-arrival times over the run", "The gap before each host publication against its time; the dashed line is the schedule's gap. Bursts of short gaps after a long one are a publisher that blocked and caught up.", func() (*plot.Plot, string) {
			return g.interarrivalOverTime()
		}},
		{"gossip_transmission", "Transmission timeline: actual against intended", "Actual − intended time of every message (Whiteblock 004's Graph 11 as a difference, which a 1 ms lag on a minutes-long axis would hide): the harness's send and the host's publication.", func() (*plot.Plot, string) {
			return g.transmissionTimeline()
		}},
		{"gossip_cpu_time", "CPU per host over time", "Every host's CPU between proc.csv samples (% of one core; grey), the three with the highest peak named; dotted lines mark the publish schedule. The kernel counts CPU time in 10 ms ticks, so at 1 s samples a host's CPU is known to about ±1 %; the harness's own is in the headline.", func() (*plot.Plot, string) {
			return g.procOverTime("CPU per host", "CPU (% of one core)", cpuSeries)
		}},
		{"gossip_rss_time", "Resident memory per host over time", "Every host's RSS (grey), the three with the highest peak named; dotted lines mark the publish schedule. Memory that grows at a constant rate is a queue filling.", func() (*plot.Plot, string) {
			return g.procOverTime("Resident memory per host", "RSS (MiB)", rssSeries)
		}},
	}
}

func (g *gossipRun) interarrivalHist() (*plot.Plot, string) {
	v := g.views()
	if len(v.ts) < 2 {
		return nil, "fewer than two messages sent"
	}
	sent, host := make([]int64, len(v.ts)), make([]int64, len(v.ts))
	for i, t := range v.ts {
		sent[i], host[i] = t.Sent, t.Host
	}
	series := []struct {
		name string
		gaps []float64
	}{{"harness send", analysis.Gaps(sent)}, {"host publish", analysis.Gaps(host)}}
	hi := 1.5 * v.stats.IntendedGap
	hi = max(hi, 1.25*v.stats.SentGap.P99, 1.25*v.stats.HostGap.P99)
	if hi <= 0 {
		hi = 1
	}
	const bins = 80
	width := niceWidth(hi / bins)
	nb := int(math.Ceil(hi / width))
	p := page.NewPlot("Publisher inter-arrival times", "gap between consecutive publications (ms)", "share of gaps (%)")
	for i, s := range series {
		counts := make([]float64, nb)
		for _, x := range s.gaps {
			counts[min(max(int(math.Floor(x/width)), 0), nb-1)]++
		}
		var xy plotter.XYs
		for b, c := range counts {
			y := 100 * c / float64(len(s.gaps))
			xy = append(xy, plotter.XY{X: float64(b) * width, Y: y}, plotter.XY{X: float64(b+1) * width, Y: y})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err.Error()
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		p.Add(l)
		page.AddLegend(p, s.name, l)
	}
	p.X.Min, p.Y.Min = 0, 0
	if v.stats.IntendedGap > 0 {
		p.Add(vline(v.stats.IntendedGap, 0, maxY(p), "schedule", p))
	}
	return p, ""
}

func (g *gossipRun) interarrivalOverTime() (*plot.Plot, string) {
	v := g.views()
	if len(v.ts) < 2 {
		return nil, "fewer than two messages sent"
	}
	host := make([]int64, len(v.ts))
	for i, t := range v.ts {
		host[i] = t.Host
	}
	slices.Sort(host)
	var xy plotter.XYs
	for i := 1; i < len(host); i++ {
		xy = append(xy, plotter.XY{X: v.sec(host[i]), Y: float64(host[i]-host[i-1]) / 1e6})
	}
	p := page.NewPlot("Publisher inter-arrival times over the run", "time since the first scheduled publication (s)", "gap before the publication (ms)")
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err.Error()
	}
	sc.GlyphStyle.Radius = vg.Points(1.5)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Color = plotutil.Color(1)
	p.Add(sc)
	page.AddLegend(p, "host publish", sc)
	p.Y.Min = 0
	if gap := v.stats.IntendedGap; gap > 0 {
		l, _ := plotter.NewLine(plotter.XYs{{X: xy[0].X, Y: gap}, {X: xy[len(xy)-1].X, Y: gap}})
		l.Color, l.Width, l.Dashes = color.Black, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		page.AddLegend(p, "schedule", l)
	}
	return p, ""
}

func (g *gossipRun) transmissionTimeline() (*plot.Plot, string) {
	v := g.views()
	if len(v.ts) == 0 {
		return nil, "no message sent"
	}
	p := page.NewPlot("Transmission timeline: actual − intended", "intended time since the first scheduled publication (s)", "actual − intended (ms)")
	for i, s := range []struct {
		name string
		at   func(analysis.Transmission) int64
	}{{"harness send", func(t analysis.Transmission) int64 { return t.Sent }}, {"host publish", func(t analysis.Transmission) int64 { return t.Host }}} {
		var xy plotter.XYs
		for _, t := range v.ts {
			xy = append(xy, plotter.XY{X: v.sec(t.Intended), Y: float64(s.at(t)-t.Intended) / 1e6})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err.Error()
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1)
		p.Add(l)
		page.AddLegend(p, s.name, l)
	}
	p.Y.Min = math.Min(0, p.Y.Min)
	return p, ""
}

// cpuSeries is a process's CPU between consecutive samples (% of one
// core); a restarted process (CPU time going back) starts over.
func cpuSeries(v *gossipViews, rows []rundir.Proc) plotter.XYs {
	var xy plotter.XYs
	for i := 1; i < len(rows); i++ {
		prev, cur := rows[i-1], rows[i]
		dt := float64(cur.TimeNs-prev.TimeNs) / 1e9
		if dt <= 0 || cur.CPUSeconds < prev.CPUSeconds || cur.PID != prev.PID {
			continue
		}
		xy = append(xy, plotter.XY{X: v.sec(cur.TimeNs), Y: 100 * (cur.CPUSeconds - prev.CPUSeconds) / dt})
	}
	return xy
}

func rssSeries(v *gossipViews, rows []rundir.Proc) plotter.XYs {
	var xy plotter.XYs
	for _, r := range rows {
		xy = append(xy, plotter.XY{X: v.sec(r.TimeNs), Y: float64(r.RSSBytes) / (1 << 20)})
	}
	return xy
}

// procOverTime draws every host of the plan as a thin grey line and the
// three with the highest peak in colour and named. The harness is left out:
// at several times a host's CPU and RSS it would flatten the hosts' lines
// (its figures are in the headline).
func (g *gossipRun) procOverTime(title, y string, f func(*gossipViews, []rundir.Proc) plotter.XYs) (*plot.Plot, string) {
	v := g.views()
	var hosts []string
	for _, n := range g.res.Gossip.HostNodes {
		hosts = append(hosts, n.Name)
	}
	type line struct {
		name string
		xy   plotter.XYs
		peak float64
	}
	var lines []line
	for _, h := range hosts {
		xy := f(v, v.proc[h])
		if len(xy) == 0 {
			continue
		}
		l := line{name: h, xy: xy}
		for _, p := range xy {
			l.peak = max(l.peak, p.Y)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return nil, "no metrics/proc.csv samples of the hosts (two per host for CPU)"
	}
	p := page.NewPlot(title+" over time", "time since the first scheduled publication (s)", y)
	top := slices.Clone(lines)
	sort.SliceStable(top, func(i, j int) bool { return top[i].peak > top[j].peak })
	named := map[string]int{}
	for i := 0; i < min(3, len(top)); i++ {
		named[top[i].name] = i
	}
	grey := color.RGBA{R: 170, G: 170, B: 170, A: 255}
	for _, l := range lines {
		if _, ok := named[l.name]; ok {
			continue
		}
		pl, err := plotter.NewLine(l.xy)
		if err != nil {
			return nil, err.Error()
		}
		pl.Color, pl.Width = grey, vg.Points(0.6)
		p.Add(pl)
	}
	if len(lines) > len(named) {
		thumb, _ := plotter.NewLine(plotter.XYs{{}, {X: 1}})
		thumb.Color = grey
		page.AddLegend(p, fmt.Sprintf("other hosts (%d)", len(lines)-len(named)), thumb)
	}
	for i := 0; i < len(named); i++ {
		pl, err := plotter.NewLine(top[i].xy)
		if err != nil {
			return nil, err.Error()
		}
		pl.Color, pl.Width = plotutil.Color(i), vg.Points(1.4)
		p.Add(pl)
		page.AddLegend(p, fmt.Sprintf("%s (peak %s)", top[i].name, page.F(top[i].peak, 1)), pl)
	}
	p.Y.Min = 0
	if len(v.ts) > 0 {
		end := v.ts[len(v.ts)-1].Intended
		hi := maxY(p)
		p.Add(vline(0, 0, hi, "", p), vline(v.sec(end), 0, hi, "", p))
	}
	return p, ""
}

// maxY is the top of p's Y axis as the data added so far set it.
func maxY(p *plot.Plot) float64 { return p.Y.Max }

// vline is a vertical dashed line at x from lo to hi; with a name it is in
// the legend.
func vline(x, lo, hi float64, name string, p *plot.Plot) plot.Plotter {
	l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
	l.Color, l.Width = color.Black, vg.Points(1)
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	if name != "" {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		page.AddLegend(p, name, l)
	}
	return l
}

// paramsSection is the parameters and the machine as the hosts ran them:
// the plan's values (every default filled in), linkem.json, machine.json.
func (g *gossipRun) paramsSection() []page.Block {
	v := g.views()
	bs := []page.Block{page.Heading{Level: 2, Text: "Parameters and machine", ID: "parameters"}}
	var rows [][]string
	add := func(k, val string) { rows = append(rows, []string{k, val}) }
	t := g.plan
	if t == nil {
		return append(bs, page.Para{Text: "No plan.json: the parameters are not recorded."})
	}
	add("hosts", page.Itoa(len(t.Nodes))+" (one process and network namespace or container each)")
	add("topology", g.topology()+"; seed "+fmt.Sprint(t.Seed)+degrees(len(t.Nodes), t.Edges))
	rel := "benchnet's gossipsub host"
	if len(t.Nodes) > 0 {
		rel += " on go-libp2p-pubsub " + t.Nodes[0].Release.Version
	}
	add("host", rel+": TCP, security and muxer left to go-libp2p's defaults (TLS 1.3 or Noise, yamux), no relay, no resource limits, no peer exchange, planned links protected from the connection manager")
	var tables spec.Tables
	if _, ok := t.Tables[spec.Table]; ok && t.KindTables(&tables) == nil {
		gs := tables.Gossipsub
		add("router D / Dlo / Dhi / Dlazy", fmt.Sprintf("%d / %d / %d / %d", gs.D, gs.Dlo, gs.Dhi, gs.Dlazy))
		add("heartbeat", gs.Heartbeat.String())
		add("flood publish", fmt.Sprint(gs.FloodPublish))
		add("peer outbound queue / validate queue", fmt.Sprintf("%d / %d", gs.OutboundQueue, gs.ValidateQueue))
	} else {
		add("router", "not recorded (plan.json has no gossipsub table)")
	}
	if pb := t.Publish; pb != nil {
		sched := pb.Duration.String()
		if pb.Count > 0 {
			sched = page.Itoa(pb.Count) + " messages"
		}
		add("messages", fmt.Sprintf("%d B at %s msg/s network-wide for %s, publisher %s", pb.Size, page.F(pb.Rate, 1), sched, pb.Source))
		add("warm-up / cool-down", pb.Warmup.String()+" / "+pb.Cooldown.String())
	} else {
		add("messages", "not recorded (plan.json has no publish table)")
	}
	link := "none (veth pairs on one bridge)"
	if v.linkem != nil {
		link = v.linkem.Backend
		if v.linkem.Reason != "" {
			link += " (" + v.linkem.Reason + ")"
		}
	}
	add("link emulation", link)
	var cond []string
	for _, c := range []struct{ k, v string }{{"delay", t.Network.Delay}, {"jitter", t.Network.Jitter}, {"loss", t.Network.Loss}, {"bandwidth", t.Network.Bandwidth}, {"zones", t.Network.Zones}} {
		if c.v != "" {
			cond = append(cond, c.k+" "+c.v)
		}
	}
	add("link conditions", page.DashIfEmpty(strings.Join(cond, ", ")))
	if m := v.machine; m != nil {
		add("machine", fmt.Sprintf("%s, %d CPUs, %s GiB", page.DashIfEmpty(m.CPUModel), m.CPUs, page.F(float64(m.MemoryBytes)/(1<<30), 1)))
		add("kernel, OS", m.Kernel+", "+m.OS+"/"+m.Arch)
		add("Go", m.GoVersion+" (the harness's; the hosts are the same binary)")
	} else {
		add("machine", "not recorded (no metrics/machine.json)")
	}
	bs = append(bs, page.Table{Head: []string{"parameter", "value"}, Rows: rows})
	for _, e := range v.errs {
		bs = append(bs, page.Para{Text: "Note: unreadable, left out of this report's views: " + e})
	}
	return bs
}

// degrees is ", degree min / median / max …" of a graph topology.
func degrees(n int, edges [][2]int) string {
	if len(edges) == 0 || n == 0 {
		return ""
	}
	d := make([]float64, n)
	for _, e := range edges {
		if e[0] < n && e[1] < n {
			d[e[0]]++
			d[e[1]]++
		}
	}
	slices.Sort(d)
	return fmt.Sprintf("; %d links, degree min / median / max %s / %s / %s", len(edges), page.F(d[0], 0), page.F(page.Percentile(d, 0.5), 0), page.F(d[n-1], 0))
}

// differencesSection says where this run and Whiteblock 004 differ, and
// where 004 contradicts itself (the seed's figures, checked 2026-11-24).
func (g *gossipRun) differencesSection() []page.Block {
	rows := [][]string{
		{"expected messages (Phase 1)", "\"we expected 36,000 messages to be generated per test\" (200 msg/s × 180 s = 36,000), then \"the number of messages received was 25365/30000 (70.4%)\"",
			"25365 / 30000 is 84.55 %; 25365 / 36000 is 70.46 %: the percentage fits 36,000, the fraction's denominator does not. We match neither and count our own: every message of published.csv."},
		{"messages lost in series 3a (Phase 2)", "246 in the Phase 2 MDR summary (\"Series3a: 246\"); 236 in the series 3 case A section (\"The total number of messages lost was 236\")",
			"the report does not say which is right; we attribute every missing delivery of our runs to a reason instead (table above)."},
		{"security", "SECIO (host.json \"security\": \"secio\"); SHA-256 and SECIO crypto named as the main CPU cost",
			"TLS 1.3 or Noise, negotiated by go-libp2p's defaults (today's go-libp2p has no SECIO); per-message CPU differs, so compare CPU shapes, not values."},
		{"gossipsub", "\"parameters of libp2p-gossipsub were left at default (e.g. GossipSubD=6)\", heartbeat \"defaulted to 1 second at the time\", peerOutboundQueueSize \"the default of 32\", a go-libp2p-pubsub of the time (its queue-size option was then a new pull request, #230)",
			"go-libp2p-pubsub " + g.pubsubVersion() + " (gossipsub v1.1/v1.2 features: peer scoring off, peer exchange off, IDONTWANT only for message data ≥ 1024 B, so not for 004's 1000 B); D, Dlo, Dhi, Dlazy, heartbeat and queues as in the table above."},
		{"last-delivery hop", "the longest sender → recipient chain", "reported both ways: the depth of the last delivery in the delivery tree, and 004's (max hop)."},
		{"machine and scale", "95 containers on one 96-vCPU Xeon (2 sockets × 24 cores × 2 threads), 360 GB; 200 msg/s for 180 s, 60 s warm-up, 600 s cool-down; links shaped by tc",
			"the machine and schedule of the table above; a run whose publisher fell behind or whose CPU saturated is marked invalid rather than reported."},
	}
	return []page.Block{page.Heading{Level: 2, Text: "Differences from Whiteblock 004", ID: "whiteblock"},
		page.Para{Text: "Whiteblock's libp2p gossipsub report (shared/seeds/004) is the method this report follows. Where 004 contradicts itself we say so rather than match either number; where our hosts differ, here is how."},
		page.Table{Head: []string{"what", "Whiteblock 004", "here"}, Rows: rows}}
}

func (g *gossipRun) pubsubVersion() string {
	if g.plan != nil && len(g.plan.Nodes) > 0 && g.plan.Nodes[0].Release.Version != "" {
		return g.plan.Nodes[0].Release.Version
	}
	return "?"
}
