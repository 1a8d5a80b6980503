package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a comparison, in its directory.
const (
	CompareMarkdownFile = "compare.md"
	CompareHTMLFile     = "compare.html"
)

// RenderCompare writes compare.md, compare.html and plots/cmp_*.png into a
// compare directory from its compare.json and the run directories it names.
// Like a run's report it is a pure function of those directories: the same
// bytes on every re-render.
func RenderCompare(dir string) ([]string, error) {
	idx, err := rundir.CompareRecord.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("compare report: %w", err)
	}
	kind := idx.NodeKind
	if kind == "" {
		kind = manifest.KindCometBFT
	}
	view, err := compareView(kind, idx)
	if err != nil {
		return nil, fmt.Errorf("compare report: %s: %w", rundir.CompareFile, err)
	}
	var problems []string
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			continue
		}
		if err := view.Add(r, r.RunPath(dir)); err != nil {
			problems = append(problems, fmt.Sprintf("run %d (%s): %v", r.Order, r.Variant, err))
		}
	}
	blocks, pngs, err := compareBlocks(idx, view, problems)
	if err != nil {
		return nil, err
	}
	blocks = withThresholds(blocks, runsThresholdSection(compareThresholdRule, compareThresholdRuns(dir, idx), false))
	return writeDoc("compare report", dir, CompareMarkdownFile, CompareHTMLFile, compareTitle(idx), blocks, pngs)
}

// chainView: a CometBFT comparison (latency, mempool, throughput).
type chainView struct {
	idx  *rundir.CompareIndex
	runs map[string][]*run // variant -> its done runs, in run order
}

func (c *chainView) Add(r rundir.CompareRun, dir string) error {
	ld, err := load(dir)
	if err != nil {
		return err
	}
	c.runs[r.Variant] = append(c.runs[r.Variant], ld)
	return nil
}

func (c *chainView) Variants() []block {
	return []block{para{Text: "Means over each variant's runs; \"vs base\" is the change against the base's mean."}, initiaTable(c.idx)}
}

func (c *chainView) PlotsIntro() string {
	return "Overlays use each variant's first run (the CDF pools all its runs); time axes start at the load's start."
}

func (c *chainView) Figures() []CompareFigure {
	var out []CompareFigure
	for _, f := range compareFigures {
		if f.name == "cmp_sweep_throughput" && len(c.idx.Sweeps) == 0 {
			continue
		}
		out = append(out, CompareFigure{Name: f.name, Title: f.title, What: f.what, Build: func() ([]byte, string, error) { return f.build(c.idx, c.runs) }})
	}
	return out
}

func (c *chainView) RunHead() []string { return []string{"TPS", "p50 (ms)", "p95 (ms)"} }

func (c *chainView) RunCells(r rundir.CompareRun) []string {
	tps, p50, p95 := "—", "—", "—"
	if rr := findRun(c.runs[r.Variant], c.idx, r); rr != nil && rr.results != nil {
		tps, p50, p95 = fmtF(rr.results.TxPerSecond, 1), fmtMs(rr.results.Latency.P50), fmtMs(rr.results.Latency.P95)
	}
	return []string{tps, p50, p95}
}

func compareTitle(idx *rundir.CompareIndex) string {
	return "benchnet comparison: " + idx.Name + " (" + strings.Join(idx.Variants, " vs ") + ")"
}

// CompareVerdictText is the verdict table as the terminal prints it.
func CompareVerdictText(idx *rundir.CompareIndex) string {
	t := verdictTable(idx)
	widths := make([]int, len(t.Head))
	for i, h := range t.Head {
		widths[i] = len([]rune(h))
	}
	for _, r := range t.Rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
	fmt.Fprintf(&b, "\n%s\n", compareOutcome(idx))
	return b.String()
}

func compareOutcome(idx *rundir.CompareIndex) string {
	if len(idx.Regressions) > 0 {
		return fmt.Sprintf("REGRESSION (exit %d): %s", idx.ExitCode, strings.Join(idx.Regressions, ", "))
	}
	return "no regression (exit 0)"
}

func verdictTable(idx *rundir.CompareIndex) table {
	t := table{Head: []string{"variant", "metric", "base", "variant value", "Δ", "95 % CI of Δ", "basis", "verdict", "why"}}
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			m, _ := metricOf(idx.NodeKind, j.Metric)
			ci := "—"
			if j.CILo != nil && j.CIHi != nil {
				ci = "[" + cmpPct(*j.CILo) + ", " + cmpPct(*j.CIHi) + "]"
			}
			verdict := string(j.Verdict)
			if j.Verdict == judge.OutcomeRegression {
				verdict = "**REGRESSION**"
			}
			why := j.Reason
			if j.RepeatsNeeded > 0 && j.Basis != "runs" && !strings.HasPrefix(j.Basis, "runs+") {
				why += fmt.Sprintf("; ~%d %s per side would decide: longer runs, or repeats", j.RepeatsNeeded, j.Basis)
			} else if j.RepeatsNeeded > 0 {
				why += fmt.Sprintf("; ~%d repeats per side would decide", j.RepeatsNeeded)
			} else if j.RepeatsNeeded < 0 {
				why += "; the delta sits on the threshold: more repeats cannot decide"
			}
			t.Rows = append(t.Rows, []string{vv.Variant, m.Name + " (" + m.Unit + ")", cmpNum(j.Base), cmpNum(j.Variant),
				cmpPct(j.DeltaPct), ci, fmt.Sprintf("%s %d/%d", j.Basis, j.NBase, j.NVariant), verdict, why})
		}
	}
	return t
}

func cmpNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// CmpDelta is v's change against base in %, a dash when either is missing
// or base is 0.
func CmpDelta(base, v float64, okB, okV bool) string {
	if !okB || !okV || base == 0 {
		return "—"
	}
	return cmpPct((v - base) / math.Abs(base) * 100)
}

// cmpPct writes a change in % with one decimal, never "-0.0%".
func cmpPct(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // also -0
	}
	return fmt.Sprintf("%+.1f%%", r)
}

// initiaTable: the Initia E2E benchmark's variant table.
func initiaTable(idx *rundir.CompareIndex) table {
	t := table{Head: []string{"variant", "runs", "TPS", "vs base", "P50 (ms)", "vs base", "P95 (ms)", "vs base", "P99 (ms)", "vs base", "peak mempool", "vs base"}}
	if len(idx.Labels) > 0 {
		t.Head = append([]string{"Config"}, t.Head...)
	}
	var base rundir.VariantSummary
	for _, s := range idx.Summary {
		if s.Variant == idx.Base {
			base = s
		}
	}
	cell := func(s rundir.VariantSummary, k string) string {
		if v, ok := s.Values[k]; ok {
			return cmpNum(v)
		}
		return "—"
	}
	vs := func(s rundir.VariantSummary, k string) string {
		if s.Variant == idx.Base {
			return "base"
		}
		b, okB := base.Values[k]
		v, okV := s.Values[k]
		return CmpDelta(b, v, okB, okV)
	}
	for _, s := range idx.Summary {
		row := []string{s.Variant, strconv.Itoa(s.Runs), cell(s, "tps"), vs(s, "tps"), cell(s, "latency_p50"), vs(s, "latency_p50"),
			cell(s, "latency_p95"), vs(s, "latency_p95"), cell(s, "latency_p99"), vs(s, "latency_p99"), cell(s, "peak_mempool"), vs(s, "peak_mempool")}
		if len(idx.Labels) > 0 {
			row = append([]string{dashIfEmpty(idx.Labels[s.Variant])}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// directionText names the metrics of idx's kind where higher is better.
func directionText(idx *rundir.CompareIndex) string {
	ms, ok := judge.MetricsOf(idx.NodeKind)
	if !ok {
		return ""
	}
	var higher []string
	for _, m := range ms {
		if m.Better == judge.HigherIsBetter {
			higher = append(higher, m.Name)
		}
	}
	switch len(higher) {
	case 0:
		return " Direction: lower is better for every metric."
	case 1:
		return " Direction: higher is better for " + higher[0] + ", lower for every other metric."
	}
	return " Direction: higher is better for " + strings.Join(higher[:len(higher)-1], ", ") + " and " + higher[len(higher)-1] + ", lower for every other metric."
}

func compareBlocks(idx *rundir.CompareIndex, view CompareView, problems []string) ([]block, map[string][]byte, error) {
	var bs []block
	add := func(b ...block) { bs = append(bs, b...) }
	add(heading{Level: 1, Text: compareTitle(idx), ID: ""})
	add(heading{Level: 2, Text: "Verdicts", ID: "verdicts"})
	outcome := compareOutcome(idx)
	if len(idx.Regressions) > 0 {
		outcome = "**" + outcome + "**"
	}
	add(para{Text: fmt.Sprintf("Base: **%s**. Threshold %g %%. %s", idx.Base, idx.Config.Threshold, outcome)})
	if len(idx.Verdicts) == 0 {
		add(noData{Reason: "no variant was judged"})
	} else {
		add(verdictTable(idx))
	}
	add(para{Text: "Rule: " + idx.Rule + directionText(idx)})
	if len(idx.Warnings) > 0 {
		t := table{Head: []string{"warning"}}
		for _, w := range idx.Warnings {
			t.Rows = append(t.Rows, []string{w})
		}
		add(t)
	}
	add(heading{Level: 2, Text: "Variants", ID: "variants"})
	add(view.Variants()...)

	pngs := map[string][]byte{}
	add(heading{Level: 2, Text: "Plots", ID: "plots"})
	add(para{Text: view.PlotsIntro()})
	for i, f := range view.Figures() {
		add(heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.Title), ID: ""})
		img, reason, err := f.Build()
		if err != nil {
			return nil, nil, fmt.Errorf("compare report: plot %s: %w", f.Name, err)
		}
		if img == nil {
			add(noData{Reason: reason})
			continue
		}
		file := f.Name + ".png"
		pngs[file] = img
		add(image{Alt: f.Title, File: PlotsDir + "/" + file, PNG: img})
		add(para{Text: f.What})
	}

	add(heading{Level: 2, Text: "Runs", ID: "runs"})
	add(para{Text: "In the order they ran: interleaved, so the drift of a shared machine spreads over every variant."})
	rt := table{Head: append(append([]string{"#", "variant", "repeat", "status"}, view.RunHead()...), "run directory")}
	for _, r := range idx.Runs {
		status := r.Status
		if r.Error != "" {
			status += ": " + r.Error
		}
		row := append([]string{strconv.Itoa(r.Order), r.Variant, strconv.Itoa(r.Repeat), status}, view.RunCells(r)...)
		rt.Rows = append(rt.Rows, append(row, r.RunDir))
	}
	add(rt)
	if len(problems) > 0 {
		t := table{Head: []string{"problem"}}
		for _, p := range problems {
			t.Rows = append(t.Rows, []string{p})
		}
		add(heading{Level: 2, Text: "Problems reading the run directories", ID: ""}, t)
	}
	return bs, pngs, nil
}

// findRun matches a CompareRun to its loaded directory by path.
func findRun(rs []*run, idx *rundir.CompareIndex, r rundir.CompareRun) *run {
	for _, x := range rs {
		if strings.HasSuffix(x.dir.Path, strings.TrimPrefix(r.RunDir, "./")) {
			return x
		}
	}
	return nil
}

type compareFigure struct {
	name, title, what string
	build             func(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error)
}

var compareFigures = []compareFigure{
	{"cmp_latency_cdf", "Latency distribution per variant",
		"One curve per variant, every committed tx of all its runs: a curve to the right is slower; a gap only in the tail is a few slow blocks.",
		plotCmpLatencyCDF},
	{"cmp_latency_per_block", "Latency per block, side by side",
		"Each dot is a block's mean latency; the panels share their axes, as the CometBFT QA report shows v0.38 and v1 next to each other.",
		plotCmpLatencyPerBlock},
	{"cmp_mempool", "Mempool size over time",
		"Summed over full nodes and validators: a variant whose mempools keep growing does not keep up with the load.",
		plotCmpMempool},
	{"cmp_sweep_throughput", "Committed vs offered, per sweep",
		"Two sweeps (or more) on one plot: mean committed TPS of each load point against the load offered; where a curve leaves the diagonal, that variant saturates.",
		plotCmpSweeps},
	{"cmp_throughput", "Throughput over time",
		"Committed txs of each block divided by the interval to the next block: it should follow the offered load.",
		plotCmpThroughput},
}

// loadStart is the run's load_start event, or its time origin.
func (r *run) loadStart() int64 {
	for _, e := range r.events {
		if e.Kind == "load_start" {
			return e.Time.UnixNano()
		}
	}
	return r.t0
}

func plotCmpLatencyCDF(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	p := newPlot("Latency distribution per variant", "latency (ms)", "fraction of txs ≤ latency")
	n := 0
	for i, v := range idx.Variants {
		var l []float64
		for _, r := range runs[v] {
			l = append(l, r.latencies()...)
		}
		if len(l) == 0 {
			continue
		}
		sort.Float64s(l)
		// At most ~2000 steps: the shape, not every tx.
		step := max(1, len(l)/2000)
		xy := plotter.XYs{}
		for k := 0; k < len(l); k += step {
			xy = append(xy, plotter.XY{X: l[k], Y: float64(k+1) / float64(len(l))})
		}
		xy = append(xy, plotter.XY{X: l[len(l)-1], Y: 1})
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, "", err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(i)
		p.Add(line)
		addLegend(p, fmt.Sprintf("%s (p50 %s ms, p99 %s ms)", v, fmtMs(percentile(l, 0.5)), fmtMs(percentile(l, 0.99))), line)
		n++
	}
	if n == 0 {
		return nil, "no committed tx with a latency in any run", nil
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	p.Y.Min, p.Y.Max = 0, 1
	b, err := renderPNG(p)
	return b, "", err
}

func plotCmpLatencyPerBlock(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	var plots []*plot.Plot
	var xmax, ymax float64
	for i, v := range idx.Variants {
		if len(runs[v]) == 0 {
			continue
		}
		xy := runs[v][0].blockLatencies(runs[v][0].loadStart())
		if len(xy) == 0 {
			continue
		}
		p := newPlot(v, "time since load start (s)", "mean latency of the block's txs (ms)")
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, "", err
		}
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		s.GlyphStyle.Radius = vg.Points(2)
		s.GlyphStyle.Color = plotutil.Color(i)
		p.Add(s)
		for _, pt := range xy {
			xmax, ymax = math.Max(xmax, pt.X), math.Max(ymax, pt.Y)
		}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return nil, "no committed tx with a latency in any run", nil
	}
	for _, p := range plots {
		p.X.Min, p.X.Max = math.Min(0, p.X.Min), xmax*1.02
		p.Y.Min, p.Y.Max = 0, ymax*1.05
	}
	cols := len(plots)
	w := vg.Length(cols) * 4.5 * vg.Inch
	img := vgimg.New(w, 4*vg.Inch)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := [][]*plot.Plot{plots}
	canvases := plot.Align(grid, t, dc)
	for j, p := range plots {
		p.Draw(canvases[0][j])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), "", nil
}

func plotCmpMempool(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	p := newPlot("Mempool size summed over full nodes and validators", "time since load start (s)", "txs in all mempools")
	n := 0
	for i, v := range idx.Variants {
		if len(runs[v]) == 0 {
			continue
		}
		r := runs[v][0]
		nodes, series, _ := r.mempoolSeries()
		if len(nodes) == 0 {
			continue
		}
		xy := aggregate(nodes, series, sum)
		shift := float64(r.loadStart()-r.t0) / 1e9
		for k := range xy {
			xy[k].X -= shift
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, "", err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		addLegend(p, v, l)
		n++
	}
	if n == 0 {
		return nil, noMempool, nil
	}
	p.Y.Min = 0
	b, err := renderPNG(p)
	return b, "", err
}

func plotCmpSweeps(idx *rundir.CompareIndex, _ map[string][]*run) ([]byte, string, error) {
	p := newPlot("Committed vs offered throughput", "offered (tx/s)", "committed (tx/s, from block times)")
	top, n := 0.0, 0
	for i, sw := range idx.Sweeps {
		x, err := rundir.SweepRecord.Read(sw.Dir)
		if err != nil {
			continue
		}
		x = plotPoints(x)
		var xy plotter.XYs
		for _, pt := range x.Grid.Points {
			if pt.State != judge.Invalid && pt.TPS.N > 0 {
				xy = append(xy, plotter.XY{X: pt.Offered, Y: pt.TPS.Mean})
				top = math.Max(top, math.Max(pt.Offered, pt.TPS.Mean))
			}
		}
		if len(xy) == 0 {
			continue
		}
		sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, "", err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l, pts)
		addLegend(p, sw.Label, l, pts)
		n++
	}
	if n == 0 {
		return nil, "no sweep with a finished valid cell", nil
	}
	diag, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	diag.Color = color.Gray{Y: 0x99}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	addLegend(p, "committed = offered", diag)
	p.X.Min, p.Y.Min = 0, 0
	b, err := renderPNG(p)
	return b, "", err
}

func plotCmpThroughput(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	p := newPlot("Committed throughput per block", "time since load start (s)", "committed txs / s")
	n := 0
	for i, v := range idx.Variants {
		if len(runs[v]) == 0 {
			continue
		}
		r := runs[v][0]
		committed := map[int64]int{}
		for _, t := range r.txs {
			if t.state == "committed" {
				committed[t.height]++
			}
		}
		bl := append([]blockRow(nil), r.blocks...)
		sort.Slice(bl, func(a, b int) bool { return bl[a].height < bl[b].height })
		t0 := r.loadStart()
		var xy plotter.XYs
		for k := 0; k+1 < len(bl); k++ {
			dt := float64(bl[k+1].timeNs-bl[k].timeNs) / 1e9
			if dt <= 0 {
				continue
			}
			xy = append(xy, plotter.XY{X: float64(bl[k].timeNs-t0) / 1e9, Y: float64(committed[bl[k].height]) / dt})
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, "", err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.2)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		addLegend(p, v, l)
		n++
	}
	if n == 0 {
		return nil, "no blocks.csv in any run", nil
	}
	p.Y.Min = 0
	b, err := renderPNG(p)
	return b, "", err
}

// metricOf finds a metric of kind by key.
func metricOf(kind, key string) (judge.Metric, bool) {
	ms, _ := judge.MetricsOf(kind)
	for _, m := range ms {
		if m.Key == key {
			return m, true
		}
	}
	return judge.Metric{}, false
}
