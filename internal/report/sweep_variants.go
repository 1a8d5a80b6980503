package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A sweep over variants or durations (rundir.SweepIndex.Grouped): one
// saturation table per group, a table of committed tx/s per variant, and
// tm-bench's plots: tx/s against rate, duration and connections, one line
// per variant, for each axis the sweep varies.

// groupLabel names a group in headings and legends.
func groupLabel(x *rundir.SweepIndex, g rundir.SweepGroup) string {
	var parts []string
	if g.Variant != "" {
		parts = append(parts, g.Variant)
	}
	if len(x.Config.Durations) > 0 {
		parts = append(parts, g.Duration.String())
	}
	return strings.Join(parts, ", ")
}

// groupedHeadline is the headline of a grouped sweep: each group's
// saturation point.
func groupedHeadline(x *rundir.SweepIndex, status string) string {
	var parts []string
	for _, g := range x.Groups {
		point := "no sustainable point"
		if ch := g.Grid.Chosen; ch != nil {
			point = fmt.Sprintf("c=%d x r=%s (%s tx/s committed)", ch.Connections, page.G(ch.Rate), page.F(ch.TPS.Mean, 1))
		}
		parts = append(parts, groupLabel(x, g)+": "+point)
	}
	what := fmt.Sprintf("%d variants", len(x.Config.Variants))
	switch {
	case len(x.Config.Variants) == 0:
		what = fmt.Sprintf("%d durations", len(x.Config.Durations))
	case len(x.Config.Durations) > 0:
		what += fmt.Sprintf(" x %d durations", len(x.Config.Durations))
	}
	return fmt.Sprintf("**Sweep over %s.** Saturation point per variant: %s. %s.", what, strings.Join(parts, "; "), status)
}

// groupedParams are the grouped sweep's extra parameters.
func groupedParams(x *rundir.SweepIndex) [][]string {
	var rows [][]string
	if len(x.Config.Variants) > 0 {
		rows = append(rows, []string{"variants (the base first)", strings.Join(x.Config.Variants, ", ")})
	}
	if len(x.Config.Durations) > 0 {
		var ds []string
		for _, d := range x.Config.Durations {
			ds = append(ds, d.String())
		}
		rows = append(rows, []string{"durations", strings.Join(ds, ", ")})
	}
	return rows
}

// groupedSections are the saturation tables, one per group, and the
// throughput table of a grouped sweep.
func groupedSections(x *rundir.SweepIndex) []page.Block {
	var bs []page.Block
	bs = append(bs, page.Heading{Level: 2, Text: "Committed tx/s per variant", ID: "variant-throughput"})
	bs = append(bs, page.Para{Text: "Committed tx/s (from block times), the mean over the done repeats with a valid load; in brackets the share of sent txs committed. One column per variant, one row per load."})
	bs = append(bs, variantThroughputTable(x))
	bs = append(bs, page.Heading{Level: 2, Text: "Saturation table per variant", ID: "saturation-table"})
	bs = append(bs, page.Para{Text: "Each variant (and duration) judged on its own cells, with its own latency baseline. Rows: r (tx/s per connection); columns: c. Each cell: txs committed / expected; **saturated** and *invalid* points are marked, the saturation point is in bold with ◀."})
	for _, g := range x.Groups {
		bs = append(bs, page.Heading{Level: 3, Text: groupLabel(x, g), ID: ""})
		sub := x.Group(g)
		bs = append(bs, page.Para{Text: upperFirst(g.Grid.Describe()) + "."})
		bs = append(bs, qaTable(sub))
	}
	return bs
}

// loadKey is one load of a grouped sweep, across variants.
type loadKey struct {
	c int
	r float64
	d time.Duration
}

// variantThroughputTable: rows are loads (c, r, duration), columns
// variants.
func variantThroughputTable(x *rundir.SweepIndex) page.Table {
	variants := x.Config.Variants
	if len(variants) == 0 {
		variants = []string{""}
	}
	tps := map[loadKey]map[string][]float64{}
	ratio := map[loadKey]map[string][]float64{}
	var keys []loadKey
	for _, c := range x.Cells {
		if c.Status != rundir.CellDone || c.Figures == nil || !c.Figures.LoadValid {
			continue
		}
		k := loadKey{c.Connections, c.Rate, x.CellDuration(c).Duration}
		if tps[k] == nil {
			tps[k], ratio[k] = map[string][]float64{}, map[string][]float64{}
			keys = append(keys, k)
		}
		tps[k][c.Variant] = append(tps[k][c.Variant], c.Figures.TPS)
		ratio[k][c.Variant] = append(ratio[k][c.Variant], c.Figures.CommittedRatio())
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.d != b.d {
			return a.d < b.d
		}
		if a.c != b.c {
			return a.c < b.c
		}
		return a.r < b.r
	})
	t := page.Table{Head: []string{"c", "r (tx/s per conn.)", "duration"}}
	for _, v := range variants {
		t.Head = append(t.Head, page.DashIfEmpty(v))
	}
	for _, k := range keys {
		row := []string{strconv.Itoa(k.c), page.G(k.r), k.d.String()}
		for _, v := range variants {
			vals := tps[k][v]
			if len(vals) == 0 {
				row = append(row, "—")
				continue
			}
			s := judge.SpreadOf(vals)
			cell := page.F(s.Mean, 1)
			if s.N > 1 {
				cell += fmt.Sprintf(" (sd %s, n=%d)", page.F(s.SD, 1), s.N)
			}
			cell += fmt.Sprintf(" [%s %%]", page.F(judge.SpreadOf(ratio[k][v]).Mean*100, 1))
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// axis is one of the sweep's load dimensions.
type axis struct {
	name, file, label string
	of                func(k loadKey) float64
	varies            func(x *rundir.SweepIndex) bool
}

var sweepAxes = []axis{
	{"rate", "sweep_variants_rate", "offered rate (tx/s per connection)",
		func(k loadKey) float64 { return k.r },
		func(x *rundir.SweepIndex) bool { return len(x.Config.Rates) > 1 }},
	{"duration", "sweep_variants_duration", "test duration (s)",
		func(k loadKey) float64 { return k.d.Seconds() },
		func(x *rundir.SweepIndex) bool { return len(x.Config.Durations) > 1 }},
	{"connections", "sweep_variants_connections", "connections (c)",
		func(k loadKey) float64 { return float64(k.c) },
		func(x *rundir.SweepIndex) bool { return len(x.Config.Connections) > 1 }},
}

// groupedFigure is one plot of a grouped sweep's report.
type groupedFigure struct {
	name, title, what string
	plot              func() (*plot.Plot, string)
}

// groupedFigures are tm-bench's plots for the axes the sweep varies.
func groupedFigures(x *rundir.SweepIndex) []groupedFigure {
	var out []groupedFigure
	for _, a := range sweepAxes {
		if !a.varies(x) {
			continue
		}
		a := a
		out = append(out, groupedFigure{a.file, "Committed tx/s against " + a.name,
			fmt.Sprintf("One line per variant (one colour each) and per value of the other axes the sweep varies; each point is the mean over the valid repeats of committed tx/s from block times, against %s.", a.label),
			func() (*plot.Plot, string) { return plotVariantAxis(x, a) }})
	}
	return out
}

// plotVariantAxis plots committed tx/s against the axis, one line per
// variant and per value of the other varying axes.
func plotVariantAxis(x *rundir.SweepIndex, a axis) (*plot.Plot, string) {
	type lineKey struct {
		variant string
		rest    loadKey // the load with the plotted axis zeroed
	}
	sums := map[lineKey]map[float64][]float64{}
	for _, c := range x.Cells {
		if c.Status != rundir.CellDone || c.Figures == nil || !c.Figures.LoadValid {
			continue
		}
		k := loadKey{c.Connections, c.Rate, x.CellDuration(c).Duration}
		rest := k
		switch a.name {
		case "rate":
			rest.r = 0
		case "duration":
			rest.d = 0
		case "connections":
			rest.c = 0
		}
		lk := lineKey{c.Variant, rest}
		if sums[lk] == nil {
			sums[lk] = map[float64][]float64{}
		}
		sums[lk][a.of(k)] = append(sums[lk][a.of(k)], c.Figures.TPS)
	}
	if len(sums) == 0 {
		return nil, "no cell with a valid load finished"
	}
	variantIdx := map[string]int{}
	for i, v := range x.Config.Variants {
		variantIdx[v] = i
	}
	var lines []lineKey
	for lk := range sums {
		lines = append(lines, lk)
	}
	sort.Slice(lines, func(i, j int) bool {
		a, b := lines[i], lines[j]
		if variantIdx[a.variant] != variantIdx[b.variant] {
			return variantIdx[a.variant] < variantIdx[b.variant]
		}
		if a.rest.d != b.rest.d {
			return a.rest.d < b.rest.d
		}
		if a.rest.c != b.rest.c {
			return a.rest.c < b.rest.c
		}
		return a.rest.r < b.rest.r
	})
	// Within a variant, lines differ by their glyph.
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	seen := map[string]int{}
	p := page.NewPlot("Committed tx/s against "+a.name, a.label, "committed (tx/s, from block times)")
	for _, lk := range lines {
		var xs []float64
		for v := range sums[lk] {
			xs = append(xs, v)
		}
		sort.Float64s(xs)
		var pts plotter.XYs
		for _, v := range xs {
			pts = append(pts, plotter.XY{X: v, Y: judge.SpreadOf(sums[lk][v]).Mean})
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err.Error()
		}
		col := plotutil.Color(variantIdx[lk.variant])
		l.Color, sc.Color = col, col
		sc.Shape = glyphs[seen[lk.variant]%len(glyphs)]
		seen[lk.variant]++
		p.Add(l, sc)
		page.AddLegend(p, lineLabel(x, lk.variant, lk.rest, a.name), l, sc)
	}
	p.Legend.Left = true
	page.MakeRoom(p)
	return p, ""
}

// lineLabel names a line: the variant and the other axes' values where
// the sweep varies them.
func lineLabel(x *rundir.SweepIndex, variant string, k loadKey, plotted string) string {
	parts := []string{}
	if variant != "" {
		parts = append(parts, variant)
	}
	if plotted != "connections" && len(x.Config.Connections) > 1 {
		parts = append(parts, "c = "+strconv.Itoa(k.c))
	}
	if plotted != "rate" && len(x.Config.Rates) > 1 {
		parts = append(parts, "r = "+page.G(k.r))
	}
	if plotted != "duration" && len(x.Config.Durations) > 1 {
		parts = append(parts, k.d.String())
	}
	if len(parts) == 0 {
		return "committed tx/s"
	}
	return strings.Join(parts, ", ")
}

// textTable lays a table out for the terminal, indented by two spaces.
func textTable(t page.Table) string {
	var b strings.Builder
	widths := make([]int, len(t.Head))
	for i, h := range t.Head {
		widths[i] = len([]rune(h))
	}
	for _, r := range t.Rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(strings.ReplaceAll(c, "**", ""))))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			c = strings.ReplaceAll(c, "**", "")
			fmt.Fprintf(&b, "  %s%s", c, strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}

// groupedCellsTable is the cells table with each cell's variant and
// duration after its number.
func groupedCellsTable(x *rundir.SweepIndex) page.Table {
	t := cellsTable(x)
	t.Head = append([]string{t.Head[0], "variant", "duration"}, t.Head[1:]...)
	for i, c := range x.Cells {
		row := t.Rows[i]
		t.Rows[i] = append([]string{row[0], page.DashIfEmpty(c.Variant), x.CellDuration(c).String()}, row[1:]...)
	}
	return t
}
