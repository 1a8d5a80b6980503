package chainreport

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
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Compare is the comparison view of a tx chain's runs (latency, mempool,
// throughput): Kind's Compare.
func Compare(idx *rundir.CompareIndex) report.CompareView {
	return &chainView{idx: idx, runs: map[string][]*run{}}
}

// chainView is a tx chain's part of a comparison.
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

func (c *chainView) Variants() []page.Block {
	return []page.Block{page.Para{Text: "Means over each variant's runs; \"vs base\" is the change against the base's mean."}, initiaTable(c.idx)}
}

func (c *chainView) PlotsIntro() string {
	return "Overlays use each variant's first run (the CDF pools all its runs); time axes start at the load's start."
}

func (c *chainView) Figures() []report.CompareFigure {
	var out []report.CompareFigure
	for _, f := range compareFigures {
		if f.name == "cmp_sweep_throughput" && len(c.idx.Sweeps) == 0 {
			continue
		}
		out = append(out, report.CompareFigure{Name: f.name, Title: f.title, What: f.what, Build: func() ([]byte, string, error) { return f.build(c.idx, c.runs) }})
	}
	return out
}

func (c *chainView) RunHead() []string { return []string{"TPS", "p50 (ms)", "p95 (ms)"} }

func (c *chainView) RunCells(r rundir.CompareRun) []string {
	tps, p50, p95 := "—", "—", "—"
	if rr := findRun(c.runs[r.Variant], c.idx, r); rr != nil && rr.results != nil {
		tps, p50, p95 = page.F(rr.results.TxPerSecond, 1), page.Ms(rr.results.Latency.P50), page.Ms(rr.results.Latency.P95)
	}
	return []string{tps, p50, p95}
}

// initiaTable: the Initia E2E benchmark's variant table.
func initiaTable(idx *rundir.CompareIndex) page.Table {
	t := page.Table{Head: []string{"variant", "runs", "TPS", "vs base", "P50 (ms)", "vs base", "P95 (ms)", "vs base", "P99 (ms)", "vs base", "peak mempool", "vs base"}}
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
			return report.CmpNum(v)
		}
		return "—"
	}
	vs := func(s rundir.VariantSummary, k string) string {
		if s.Variant == idx.Base {
			return "base"
		}
		b, okB := base.Values[k]
		v, okV := s.Values[k]
		return report.CmpDelta(b, v, okB, okV)
	}
	for _, s := range idx.Summary {
		row := []string{s.Variant, strconv.Itoa(s.Runs), cell(s, "tps"), vs(s, "tps"), cell(s, "latency_p50"), vs(s, "latency_p50"),
			cell(s, "latency_p95"), vs(s, "latency_p95"), cell(s, "latency_p99"), vs(s, "latency_p99"), cell(s, "peak_mempool"), vs(s, "peak_mempool")}
		if len(idx.Labels) > 0 {
			row = append([]string{page.DashIfEmpty(idx.Labels[s.Variant])}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
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
		if e.Kind == rundir.EventLoadStart {
			return e.Time.UnixNano()
		}
	}
	return r.t0
}

func plotCmpLatencyCDF(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	p := page.NewPlot("Latency distribution per variant", "latency (ms)", "fraction of txs ≤ latency")
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
		page.AddLegend(p, fmt.Sprintf("%s (p50 %s ms, p99 %s ms)", v, page.Ms(page.Percentile(l, 0.5)), page.Ms(page.Percentile(l, 0.99))), line)
		n++
	}
	if n == 0 {
		return nil, "no committed tx with a latency in any run", nil
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	p.Y.Min, p.Y.Max = 0, 1
	b, err := page.RenderPNG(p)
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
		p := page.NewPlot(v, "time since load start (s)", "mean latency of the block's txs (ms)")
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
	p := page.NewPlot("Mempool size summed over full nodes and validators", "time since load start (s)", "txs in all mempools")
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
		page.AddLegend(p, v, l)
		n++
	}
	if n == 0 {
		return nil, noMempool, nil
	}
	p.Y.Min = 0
	b, err := page.RenderPNG(p)
	return b, "", err
}

func plotCmpSweeps(idx *rundir.CompareIndex, _ map[string][]*run) ([]byte, string, error) {
	p := page.NewPlot("Committed vs offered throughput", "offered (tx/s)", "committed (tx/s, from block times)")
	top, n := 0.0, 0
	for i, sw := range idx.Sweeps {
		x, err := rundir.SweepRecord.Read(sw.Dir)
		if err != nil {
			continue
		}
		x = report.PlotPoints(x)
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
		page.AddLegend(p, sw.Label, l, pts)
		n++
	}
	if n == 0 {
		return nil, "no sweep with a finished valid cell", nil
	}
	diag, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	diag.Color = color.Gray{Y: 0x99}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	page.AddLegend(p, "committed = offered", diag)
	p.X.Min, p.Y.Min = 0, 0
	b, err := page.RenderPNG(p)
	return b, "", err
}

func plotCmpThroughput(idx *rundir.CompareIndex, runs map[string][]*run) ([]byte, string, error) {
	p := page.NewPlot("Committed throughput per block", "time since load start (s)", "committed txs / s")
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
		page.AddLegend(p, v, l)
		n++
	}
	if n == 0 {
		return nil, "no blocks.csv in any run", nil
	}
	p.Y.Min = 0
	b, err := page.RenderPNG(p)
	return b, "", err
}
