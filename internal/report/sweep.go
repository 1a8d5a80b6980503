package report

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a sweep's report, relative to the sweep directory.
const (
	SweepMarkdownFile = "sweep.md"
	SweepHTMLFile     = "sweep.html"
)

// sweepFigures are the plots of a sweep report, in order.
var sweepFigures = []struct {
	name, title, what string
	build             func(x *rundir.SweepIndex) (*plot.Plot, string)
}{
	{"sweep_throughput", "Committed vs offered throughput",
		"One line per connection count; the dashed line is y = x. Throughput that follows the diagonal is sustained; where a line bends below it, the network (not the load) is the limit.",
		plotSweepThroughput},
	{"sweep_latency", "Latency vs committed throughput",
		"p50 (solid) and p99 (dashed) per connection count against the throughput it achieved: latency that climbs while throughput stops growing is saturation.",
		plotSweepLatency},
}

// RenderSweep reads the sweep directory dir (sweep.json only) and writes
// sweep.md (plots in plots/) and a self-contained sweep.html into it. The
// judgement is recomputed from the cells' figures, so the same sweep.json
// always gives the same bytes.
func RenderSweep(dir string) ([]string, error) {
	x, err := rundir.SweepRecord.Read(dir)
	if err != nil {
		return nil, err
	}
	x.Judge()
	blocks, pngs, err := sweepBlocks(x)
	if err != nil {
		return nil, err
	}
	sb, spng, err := sweepScatter(dir, x)
	if err != nil {
		return nil, err
	}
	blocks = append(blocks, sb...)
	if pngs == nil {
		pngs = map[string][]byte{}
	}
	maps.Copy(pngs, spng)
	blocks = withThresholds(blocks, runsThresholdSection(sweepThresholdRule, sweepThresholdRuns(dir, x), true))
	return writeDoc("sweep report", dir, SweepMarkdownFile, SweepHTMLFile, sweepTitle(x), blocks, pngs)
}

func sweepTitle(x *rundir.SweepIndex) string {
	if x.Kind == "search" {
		return "benchnet saturation search: " + x.Name
	}
	return "benchnet sweep: " + x.Name
}

// SweepSummary is the terminal's account of a sweep: the saturation table
// (or the search's probes) and the verdict.
func SweepSummary(x *rundir.SweepIndex) string {
	x.Judge()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", strings.ReplaceAll(sweepHeadline(x), "**", ""))
	if x.Kind == "search" {
		for _, p := range x.Search.Probes {
			fmt.Fprintf(&b, "  probe %8.1f tx/s x %d run(s): %-11s %s\n", p.Rate, p.Runs, p.Decision, p.Why)
		}
	} else if x.Grouped() {
		for _, g := range x.Groups {
			fmt.Fprintf(&b, "%s:\n%s", groupLabel(x, g), textTable(qaTable(x.Group(g))))
		}
		fmt.Fprintf(&b, "committed tx/s per variant:\n%s", textTable(variantThroughputTable(x)))
	} else {
		b.WriteString(textTable(qaTable(x)))
	}
	if t, ok := timingPara(x).(page.Para); ok {
		fmt.Fprintf(&b, "%s\n", t.Text)
	}
	return b.String()
}

func sweepHeadline(x *rundir.SweepIndex) string {
	done, total := 0, len(x.Cells)
	for _, c := range x.Cells {
		if c.Status == rundir.CellDone {
			done++
		}
	}
	status := fmt.Sprintf("%d of %d cells measured", done, total)
	if !x.Complete {
		status += " — **incomplete**: `benchnet sweep --resume DIR` measures the rest"
	}
	if x.Kind == "search" {
		st := x.Search
		verdict := st.Outcome
		if st.Detail != "" {
			verdict += ": " + st.Detail
		}
		if !st.Done {
			verdict = fmt.Sprintf("not finished: bracket (%s, %s), next probe %s tx/s", page.G(st.Low), page.G(st.High), page.G(st.Next))
		}
		return fmt.Sprintf("**Search at c = %d: %s.** %d runs. %s.", x.Config.Connections[0], verdict, st.Runs, status)
	}
	if done == 0 {
		return fmt.Sprintf("**No cell measured yet.** %s.", status)
	}
	if x.Grouped() {
		return groupedHeadline(x, status)
	}
	return fmt.Sprintf("**%s.** %s.", upperFirst(x.Grid.Describe()), status)
}

// upperFirst capitalises the first rune (a rule may begin with "Δ": its
// first byte alone is no character).
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func sweepBlocks(x *rundir.SweepIndex) ([]page.Block, map[string][]byte, error) {
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	c := x.Config
	add(page.Heading{Level: 1, Text: sweepTitle(x), ID: ""})
	add(page.Para{Text: sweepHeadline(x)})
	add(page.Heading{Level: 2, Text: "The rule", ID: "rule"})
	add(page.Para{Text: upperFirst(x.Rule) + "."})
	if x.Grid != nil {
		add(page.Para{Text: "Points: " + x.Grid.PointRule + "; " + x.Grid.PointChoice + "."})
	}
	if x.Grid != nil && x.Grid.BaselineP50Ms > 0 && !x.Grouped() {
		add(page.Para{Text: fmt.Sprintf("Lightest load's p50 latency (the latency baseline): %s ms.", page.Ms(x.Grid.BaselineP50Ms))})
	}
	params := [][]string{
		{"testnet", x.Name},
		{"kind", x.Kind},
		{"cell duration", c.Duration.String()},
		{"cell order", fmt.Sprintf("randomised from seed %d, repeats interleaved", x.Seed)},
		{"testnet per cell (--fresh)", strconv.FormatBool(c.Fresh)},
		{"cool-down bound", c.Cooldown.String()},
		{"started", x.Started},
		{"finished", page.DashIfEmpty(x.Finished)},
	}
	if x.Kind == "search" {
		params = append(params, []string{"connections", strconv.Itoa(c.Connections[0])},
			[]string{"rates", fmt.Sprintf("from %s, within [%s, %s] tx/s per connection", page.G(c.StartRate), page.G(c.MinRate), page.G(c.MaxRate))},
			[]string{"precision", fmt.Sprintf("%s %%", page.G(c.Precision*100))},
			[]string{"repeats per probe", fmt.Sprintf("%d to %d", c.MinRepeats, c.MaxRepeats)},
			[]string{"budget", fmt.Sprintf("%d runs", c.Budget)})
	} else {
		params = append(params, []string{"connections (c)", fmt.Sprint(c.Connections)},
			[]string{"rates (r, tx/s per connection)", fmtFloats(c.Rates)},
			[]string{"repeats", strconv.Itoa(c.Repeats)})
		params = append(params, groupedParams(x)...)
	}
	add(page.Heading{Level: 2, Text: "Parameters", ID: "parameters"})
	add(page.Table{Head: []string{"parameter", "value"}, Rows: params})

	if x.Kind == "search" {
		add(page.Heading{Level: 2, Text: "Probes", ID: "probes"})
		var rows [][]string
		for i, p := range x.Search.Probes {
			rows = append(rows, []string{strconv.Itoa(i + 1), page.G(p.Rate), strconv.Itoa(p.Runs), string(p.Decision), p.Why})
		}
		add(page.Table{Head: []string{"probe", "rate (tx/s per conn.)", "runs", "decision", "why"}, Rows: rows})
	} else if x.Grouped() {
		add(groupedSections(x)...)
	} else {
		add(page.Heading{Level: 2, Text: "Saturation table", ID: "saturation-table"})
		add(page.Para{Text: "Rows: r (tx/s per connection); columns: c (connections). Each cell: txs committed in the cell's window / expected (c x r x T as configured), the mean over valid repeats; **saturated** and *invalid* points are marked, and the saturation point is in bold with ◀."})
		add(qaTable(x))
		add(page.Heading{Level: 2, Text: "Sustainable rate per connection count", ID: "lines"})
		var rows [][]string
		for _, l := range x.Grid.Lines {
			stop := "—"
			if l.StoppedState != "" {
				stop = fmt.Sprintf("%s tx/s (%s)", page.G(l.StoppedAt), l.StoppedState)
			}
			sust, off, tps := "none", "—", "—"
			if l.Sustainable > 0 {
				sust = page.G(l.Sustainable)
				if p := findPoint(x.Grid, l.Connections, l.Sustainable); p != nil {
					off, tps = page.G(p.Offered), spreadText(p.TPS)
				}
			}
			rows = append(rows, []string{strconv.Itoa(l.Connections), sust, off, tps, stop})
		}
		add(page.Table{Head: []string{"c", "sustainable r", "offered tx/s", "committed tx/s", "first failing r"}, Rows: rows})
	}

	pngs := map[string][]byte{}
	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	figs := make([]groupedFigure, len(sweepFigures))
	for i, f := range sweepFigures {
		figs[i] = groupedFigure{f.name, f.title, f.what, func() (*plot.Plot, string) { return f.build(x) }}
	}
	if x.Grouped() {
		figs = groupedFigures(x)
		if len(figs) == 0 {
			add(page.NoData{Reason: "the sweep varies no axis but the variants: see the table of committed tx/s per variant"})
		}
	}
	for i, f := range figs {
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.title), ID: ""})
		p, reason := f.plot()
		if p == nil {
			add(page.NoData{Reason: reason})
			continue
		}
		w, err := p.WriterTo(page.W, page.H, "png")
		if err != nil {
			return nil, nil, fmt.Errorf("sweep report: plot %s: %w", f.name, err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("sweep report: plot %s: %w", f.name, err)
		}
		pngs[f.name+".png"] = buf.Bytes()
		add(page.Image{Alt: f.title, File: page.PlotsDir + "/" + f.name + ".png", PNG: buf.Bytes()})
		add(page.Para{Text: f.what})
	}

	add(page.Heading{Level: 2, Text: "Cells", ID: "cells"})
	add(page.Para{Text: "In run order. Every cell is an ordinary run directory (`benchnet report` renders it on its own). Timing: wall = the cell's measurement (warm-up, load, drain, harvest, analysis); cool-down = the wait before it; overhead = the rest of the gap since the previous cell."})
	if x.Grouped() {
		add(groupedCellsTable(x))
	} else {
		add(cellsTable(x))
	}
	add(timingPara(x))
	return bs, pngs, nil
}

func fmtFloats(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = page.G(f)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func spreadText(s judge.Spread) string {
	if s.N <= 1 {
		return page.F(s.Mean, 1)
	}
	return fmt.Sprintf("%s (sd %s, %s–%s, n=%d)", page.F(s.Mean, 1), page.F(s.SD, 1), page.F(s.Min, 1), page.F(s.Max, 1), s.N)
}

func findPoint(g *judge.Grid, c int, r float64) *judge.Point {
	for i := range g.Points {
		if g.Points[i].Connections == c && g.Points[i].Rate == r {
			return &g.Points[i]
		}
	}
	return nil
}

// qaTable is the QA reports' layout: rows r, columns c, committed of
// expected in each cell.
func qaTable(x *rundir.SweepIndex) page.Table {
	conns := append([]int(nil), x.Config.Connections...)
	sort.Ints(conns)
	rates := append([]float64(nil), x.Config.Rates...)
	sort.Float64s(rates)
	t := page.Table{Head: []string{"r \\ c"}}
	for _, c := range conns {
		t.Head = append(t.Head, "c = "+strconv.Itoa(c))
	}
	expected := map[[2]float64][]int{}
	committedAll := map[[2]float64][]float64{}
	for _, cell := range x.Cells {
		k := [2]float64{float64(cell.Connections), cell.Rate}
		if cell.Status == rundir.CellDone && cell.Expected > 0 {
			expected[k] = append(expected[k], cell.Expected)
		}
		if cell.Status == rundir.CellDone && cell.Figures != nil {
			committedAll[k] = append(committedAll[k], float64(cell.Figures.Committed))
		}
	}
	for _, r := range rates {
		row := []string{page.G(r)}
		for _, c := range conns {
			p := findPoint(x.Grid, c, r)
			exp := ""
			if e := expected[[2]float64{float64(c), r}]; len(e) > 0 {
				exp = strconv.Itoa(e[0])
			} else {
				exp = strconv.Itoa(int(math.Round(float64(c) * r * x.Config.Duration.Seconds())))
			}
			if p == nil {
				row = append(row, "— / "+exp)
				continue
			}
			s := "— / " + exp
			switch {
			case p.Committed.N > 0:
				s = fmt.Sprintf("%.0f / %s", p.Committed.Mean, exp)
			case len(committedAll[[2]float64{float64(c), r}]) > 0:
				// No valid repeat: still show what the chain committed.
				s = fmt.Sprintf("%.0f / %s", judge.SpreadOf(committedAll[[2]float64{float64(c), r}]).Mean, exp)
			}
			switch {
			case p.NInvalid > 0:
				s += fmt.Sprintf(" (%d runs, %d invalid)", p.Repeats, p.NInvalid)
			case p.Repeats > 1:
				s += fmt.Sprintf(" (%d runs)", p.Repeats)
			}
			switch p.State {
			case judge.Saturated:
				s += " **saturated**"
			case judge.Invalid:
				s += " *invalid*"
			}
			if ch := x.Grid.Chosen; ch != nil && ch.Connections == c && ch.Rate == r {
				s = "**" + strings.ReplaceAll(s, "**", "") + "** ◀"
			}
			row = append(row, s)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func cellsTable(x *rundir.SweepIndex) page.Table {
	t := page.Table{Head: []string{"#", "c", "r", "rep", "status", "offered", "expected", "sent", "committed", "rejected", "lost", "TPS", "p50 ms", "p95 ms", "p99 ms", "verdict", "wall s", "cool-down s", "overhead s", "run"}}
	for _, c := range x.Cells {
		row := []string{strconv.Itoa(c.Order), strconv.Itoa(c.Connections), page.G(c.Rate), strconv.Itoa(c.Repeat), c.Status}
		if f := c.Figures; f != nil {
			row = append(row, page.G(f.Offered), strconv.Itoa(c.Expected), strconv.Itoa(f.Sent), strconv.Itoa(f.Committed), strconv.Itoa(f.Rejected),
				strconv.Itoa(f.Lost), page.F(f.TPS, 1), page.Ms(f.P50Ms), page.Ms(f.P95Ms), page.Ms(f.P99Ms))
		} else {
			row = append(row, "—", "—", "—", "—", "—", "—", "—", "—", "—", "—")
		}
		verdict := "—"
		if v := c.Verdict; v != nil {
			verdict = string(v.State)
			if len(v.Reasons) > 0 {
				verdict += ": " + strings.Join(v.Reasons, "; ")
			}
		}
		if c.Error != "" {
			verdict = "error: " + c.Error
		}
		row = append(row, verdict, page.F(c.WallSec, 1), page.F(c.CooldownSec, 1), page.F(c.OverheadSec, 1), page.DashIfEmpty(c.RunDir))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func timingPara(x *rundir.SweepIndex) page.Block {
	var wall, cool, over, fixed []float64
	load := x.Config.Duration.Seconds()
	for _, c := range x.Cells {
		if c.Status != rundir.CellDone {
			continue
		}
		wall = append(wall, c.WallSec)
		fixed = append(fixed, c.WallSec-load)
		if c.Order > 1 && !x.Config.Fresh {
			cool = append(cool, c.CooldownSec)
			over = append(over, c.OverheadSec)
		}
	}
	if len(wall) == 0 {
		return page.NoData{Reason: "no cell finished"}
	}
	w, fx := judge.SpreadOf(wall), judge.SpreadOf(fixed)
	s := fmt.Sprintf("Timing: %d cells measured in %s s (mean %s s per cell for %s of load: %s s of warm-up, drain, harvest and analysis, max %s s)",
		len(wall), page.F(w.Mean*float64(w.N), 1), page.F(w.Mean, 1), x.Config.Duration, page.F(fx.Mean, 1), page.F(fx.Max, 1))
	if len(cool) > 0 {
		cs, ovs := judge.SpreadOf(cool), judge.SpreadOf(over)
		s += fmt.Sprintf("; between cells a cool-down of mean %s s (max %s s) and an overhead beyond it of mean %s s (max %s s)", page.F(cs.Mean, 1), page.F(cs.Max, 1), page.F(ovs.Mean, 2), page.F(ovs.Max, 2))
	}
	return page.Para{Text: s + "."}
}

// series groups the grid's points by connection count, x and y chosen by
// the caller, in the order of the offered load (a line past saturation may
// turn back in x: throughput falls while latency climbs); repeats are
// averaged per rate.
func series(x *rundir.SweepIndex, xy func(p judge.Point) (float64, float64, bool)) ([]int, map[int]plotter.XYs) {
	out := map[int]plotter.XYs{}
	for _, p := range x.Grid.Points {
		if p.State == judge.Invalid {
			continue
		}
		if vx, vy, ok := xy(p); ok {
			out[p.Connections] = append(out[p.Connections], plotter.XY{X: vx, Y: vy})
		}
	}
	var conns []int
	for c := range out {
		conns = append(conns, c)
	}
	sort.Ints(conns)
	return conns, out
}

// PlotPoints gives a search's cells a grid of (c, rate) points, for the
// plots.
func PlotPoints(x *rundir.SweepIndex) *rundir.SweepIndex {
	if x.Grid != nil {
		return x
	}
	g := x.Config.Rule().JudgeGrid(x.DoneCells())
	y := *x
	y.Grid = &g
	return &y
}

func plotSweepThroughput(x *rundir.SweepIndex) (*plot.Plot, string) {
	x = PlotPoints(x)
	conns, s := series(x, func(p judge.Point) (float64, float64, bool) { return p.Offered, p.TPS.Mean, p.TPS.N > 0 })
	if len(conns) == 0 {
		return nil, "no cell with a valid load finished"
	}
	p := page.NewPlot("Committed vs offered throughput", "offered (tx/s)", "committed (tx/s, from block times)")
	top := 0.0
	for _, pts := range s {
		for _, q := range pts {
			top = math.Max(top, math.Max(q.X, q.Y))
		}
	}
	diag, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top * 1.05, Y: top * 1.05}})
	diag.Color = color.Gray{Y: 120}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	page.AddLegend(p, "y = x", diag)
	for i, c := range conns {
		l, pts, _ := plotter.NewLinePoints(s[c])
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		page.AddLegend(p, fmt.Sprintf("c = %d", c), l, pts)
	}
	if ch := x.Grid.Chosen; ch != nil && ch.TPS.N > 0 {
		mark, _ := plotter.NewScatter(plotter.XYs{{X: ch.Offered, Y: ch.TPS.Mean}})
		mark.Shape = draw.RingGlyph{}
		mark.Radius = vg.Points(9)
		mark.Color = color.Black
		p.Add(mark)
		page.AddLegend(p, fmt.Sprintf("saturation point (c = %d, r = %s)", ch.Connections, page.G(ch.Rate)), mark)
	}
	p.Legend.Left = true
	page.MakeRoom(p)
	return p, ""
}

func plotSweepLatency(x *rundir.SweepIndex) (*plot.Plot, string) {
	x = PlotPoints(x)
	conns, p50 := series(x, func(p judge.Point) (float64, float64, bool) { return p.TPS.Mean, p.P50Ms.Mean, p.P50Ms.N > 0 })
	_, p99 := series(x, func(p judge.Point) (float64, float64, bool) { return p.TPS.Mean, p.P99Ms.Mean, p.P99Ms.N > 0 })
	if len(conns) == 0 {
		return nil, "no cell with a valid load finished"
	}
	p := page.NewPlot("Latency vs committed throughput", "committed (tx/s)", "latency (ms)")
	for i, c := range conns {
		l50, pt50, _ := plotter.NewLinePoints(p50[c])
		l50.Color, pt50.Color = plotutil.Color(i), plotutil.Color(i)
		pt50.Shape = draw.CircleGlyph{}
		l99, pt99, _ := plotter.NewLinePoints(p99[c])
		l99.Color, pt99.Color = plotutil.Color(i), plotutil.Color(i)
		l99.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		pt99.Shape = draw.TriangleGlyph{}
		p.Add(l50, pt50, l99, pt99)
		page.AddLegend(p, fmt.Sprintf("c = %d p50", c), l50, pt50)
		page.AddLegend(p, fmt.Sprintf("c = %d p99", c), l99, pt99)
	}
	p.Legend.Left = true
	page.MakeRoom(p)
	return p, ""
}
