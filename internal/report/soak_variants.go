package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a soak over variants' report.
const (
	SoakVariantsMarkdownFile = "soak-variants.md"
	SoakVariantsHTMLFile     = "soak-variants.html"
)

func init() {
	RegisterDir(rundir.SoakVariantsFile, "soak-variants", func(dir, _ string) ([]string, error) { return RenderSoakVariants(dir) })
}

// RenderSoakVariants writes soak-variants.md and .html into a soak over
// variants' directory: each variant's decay fit (its run's soak.json) side
// by side, the half-lives first, and every variant's tx/s per second with
// its fit on one plot. Each variant's run report (report.md, soak.md) is
// rendered into its run directory first.
func RenderSoakVariants(dir string) ([]string, error) {
	idx, err := rundir.SoakVariantsRecord.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	var written []string
	fits := map[string]*rundir.SoakResult{}
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			continue
		}
		runDir := filepath.Join(dir, r.RunDir)
		res, err := rundir.SoakRecord.Read(runDir)
		if err != nil {
			return written, fmt.Errorf("soak report: %s: %w", r.Variant, err)
		}
		fits[r.Variant] = res
		files, err := renderSoakRun(runDir, "")
		if err != nil {
			return written, fmt.Errorf("soak report: %s: %w", r.Variant, err)
		}
		written = append(written, files...)
	}
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	title := "benchnet soak over variants: " + idx.Name
	add(page.Heading{Level: 1, Text: title, ID: ""})
	status := fmt.Sprintf("%d variants, %s of %s tx/s per connection x %d connection(s) each, one after the other", len(idx.Runs), idx.Duration, page.G(idx.Rate), idx.Connections)
	if !idx.Complete {
		status += " — **incomplete**: `benchnet soak --resume DIR` runs the rest"
	}
	add(page.Para{Text: status + "."})
	add(page.Heading{Level: 2, Text: "Half-lives", ID: "half-lives"})
	add(page.Para{Text: "Each variant's committed tx/s per second (from block times) fitted with a + b·exp(−t/τ); the half-life τ·ln2 with its 95 % bootstrap interval, or \"no decay\" when b is not significantly above 0 or τ falls outside the window. The variants ran one after the other, not interleaved: a drift of the machine weighs on the later ones."})
	t := page.Table{Head: []string{"variant", "config", "half-life (s)", "95 % interval (s)", "floor a (tx/s)", "decaying b (tx/s)", "τ (s)", "mean tx/s", "seconds", "verdict", "run"}}
	for _, r := range idx.Runs {
		res, ok := fits[r.Variant]
		if !ok {
			why := r.Status
			if r.Error != "" {
				why += ": " + r.Error
			}
			t.Rows = append(t.Rows, []string{r.Variant, page.DashIfEmpty(r.Label), "—", "—", "—", "—", "—", "—", "—", why, page.DashIfEmpty(r.RunDir)})
			continue
		}
		f := res.Fit
		hl, ci := "no decay", "—"
		if f.Decays {
			hl, ci = page.F(f.HalfLife, 0), fmt.Sprintf("%s to %s", page.F(f.HalfLifeLo, 0), page.F(f.HalfLifeHi, 0))
		}
		mean := 0.0
		for _, v := range res.TPS {
			mean += v
		}
		if len(res.TPS) > 0 {
			mean /= float64(len(res.TPS))
		}
		t.Rows = append(t.Rows, []string{r.Variant, page.DashIfEmpty(r.Label), hl, ci, page.F(f.A, 1), page.F(f.B, 1), page.F(f.Tau, 1), page.F(mean, 1),
			strconv.Itoa(f.N), f.Verdict, fmt.Sprintf("[%s](%s/%s)", r.RunDir, r.RunDir, SoakMarkdownFile)})
	}
	add(t)
	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	add(page.Heading{Level: 3, Text: "1. Committed tx/s per second, every variant", ID: ""})
	if len(fits) == 0 {
		add(page.NoData{Reason: "no variant's soak finished"})
	} else {
		png, err := soakVariantsPlot(idx, fits)
		if err != nil {
			return written, err
		}
		if err := os.MkdirAll(filepath.Join(dir, page.PlotsDir), 0o755); err != nil {
			return written, fmt.Errorf("soak report: %w", err)
		}
		f := filepath.Join(dir, page.PlotsDir, "soak_variants_tps.png")
		if err := rundir.WriteAtomic(f, png); err != nil {
			return written, fmt.Errorf("soak report: %w", err)
		}
		written = append(written, f)
		add(page.Image{Alt: "Committed tx/s per second, every variant", File: page.PlotsDir + "/soak_variants_tps.png", PNG: png})
		add(page.Para{Text: "Dots: each variant's txs committed per 1 s of block time; lines: its fitted a + b·exp(−t/τ), one colour per variant."})
	}
	add(sheetLink)
	md, htmlPath := filepath.Join(dir, SoakVariantsMarkdownFile), filepath.Join(dir, SoakVariantsHTMLFile)
	if err := rundir.WriteAtomic(md, page.Markdown(bs)); err != nil {
		return written, fmt.Errorf("soak report: %w", err)
	}
	if err := rundir.WriteAtomic(htmlPath, page.HTML(title, bs)); err != nil {
		return written, fmt.Errorf("soak report: %w", err)
	}
	return append([]string{md, htmlPath}, written...), nil
}

func soakVariantsPlot(idx *rundir.SoakVariantsIndex, fits map[string]*rundir.SoakResult) ([]byte, error) {
	p := page.NewPlot("Committed tx/s per second, every variant", "time since the first run block (s)", "tx/s")
	for i, r := range idx.Runs {
		res, ok := fits[r.Variant]
		if !ok {
			continue
		}
		col := plotutil.Color(i)
		pts := make(plotter.XYs, len(res.T))
		for k := range res.T {
			pts[k] = plotter.XY{X: res.T[k], Y: res.TPS[k]}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("soak plot: %w", err)
		}
		sc.Shape, sc.Radius, sc.Color = draw.CircleGlyph{}, vg.Points(1.2), col
		p.Add(sc)
		label := r.Variant
		f := res.Fit
		if f.Decays {
			label += fmt.Sprintf(" (half-life %s s)", page.F(f.HalfLife, 0))
		} else {
			label += " (no decay)"
		}
		if len(res.T) > 0 && f.Tau > 0 {
			n := 200
			curve := make(plotter.XYs, n+1)
			end := res.T[len(res.T)-1]
			for k := 0; k <= n; k++ {
				x := end * float64(k) / float64(n)
				curve[k] = plotter.XY{X: x, Y: f.A + f.B*math.Exp(-x/f.Tau)}
			}
			l, _ := plotter.NewLine(curve)
			l.Color, l.Width = col, vg.Points(2)
			p.Add(l)
			page.AddLegend(p, label, l, sc)
		} else {
			page.AddLegend(p, label, sc)
		}
	}
	png, err := page.RenderPNG(p)
	if err != nil {
		return nil, fmt.Errorf("soak plot: %w", err)
	}
	return png, nil
}
