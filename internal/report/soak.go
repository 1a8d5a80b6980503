package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a soak's report, in its run directory.
const (
	SoakMarkdownFile = "soak.md"
	SoakHTMLFile     = "soak.html"
)

// RenderSoak writes soak.md and a self-contained soak.html into a soak's
// run directory from its soak.json and the run report's own mempool and
// memory plots (report.md is rendered first). It returns the paths written.
func RenderSoak(runDir string) ([]string, error) {
	res, err := rundir.SoakRecord.Read(runDir)
	if err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	fit := res.Fit
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	title := "benchnet soak: " + filepath.Base(runDir)
	add(page.Heading{Level: 1, Text: title, ID: ""})
	add(page.Para{Text: "**" + upperFirst(fit.Verdict) + ".**"})
	add(page.Heading{Level: 2, Text: "The rule", ID: "rule"})
	add(page.Para{Text: upperFirst(fit.Rule) + "."})
	rows := [][]string{
		{"seconds fitted", fmt.Sprint(fit.N)},
		{"a (floor, tx/s)", page.F(fit.A, 1)},
		{"b (decaying part, tx/s)", fmt.Sprintf("%s (95 %% interval %s to %s)", page.F(fit.B, 1), page.F(fit.BLo, 1), page.F(fit.BHi, 1))},
		{"tau (s)", page.F(fit.Tau, 1)},
		{"residual RMS (tx/s)", page.F(fit.RMSE, 1)},
	}
	if fit.Decays {
		rows = append(rows, []string{"half-life (s)", fmt.Sprintf("%s (95 %% interval %s to %s)", page.F(fit.HalfLife, 0), page.F(fit.HalfLifeLo, 0), page.F(fit.HalfLifeHi, 0))})
	}
	add(page.Table{Head: []string{"fit", "value"}, Rows: rows})
	add(page.Para{Text: "The full run report, with every other plot, is [report.md](report.md) beside this file."})

	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	png, err := soakPlot(res)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(runDir, page.PlotsDir), 0o755); err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	fitFile := filepath.Join(runDir, page.PlotsDir, "soak_tps.png")
	if err := rundir.WriteAtomic(fitFile, png); err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	add(page.Heading{Level: 3, Text: "1. Committed tx/s per second, with the fit", ID: ""})
	add(page.Image{Alt: "Committed tx/s per second", File: page.PlotsDir + "/soak_tps.png", PNG: png})
	add(page.Para{Text: "Dots: txs committed per 1 s of block time; line: the fitted a + b·exp(−t/τ); dashed (when it decays): the floor a."})
	k, _, _ := kindOfRun(runDir) // no kind: no plots of the run report
	for i, f := range k.SoakPlots {
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+2, f.Title), ID: ""})
		b, err := os.ReadFile(filepath.Join(runDir, page.PlotsDir, f.File+".png"))
		if err != nil {
			add(page.NoData{Reason: "the run report's " + f.File + ".png is missing: run `benchnet report` on this directory"})
			continue
		}
		add(page.Image{Alt: f.Title, File: page.PlotsDir + "/" + f.File + ".png", PNG: b})
	}
	add(sheetLink)
	md, htmlPath := filepath.Join(runDir, SoakMarkdownFile), filepath.Join(runDir, SoakHTMLFile)
	if err := rundir.WriteAtomic(md, page.Markdown(bs)); err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	if err := rundir.WriteAtomic(htmlPath, page.HTML(title, bs)); err != nil {
		return nil, fmt.Errorf("soak report: %w", err)
	}
	return []string{md, htmlPath, fitFile}, nil
}

func soakPlot(res *rundir.SoakResult) ([]byte, error) {
	p := page.NewPlot("Committed tx/s per second", "time since the first run block (s)", "tx/s")
	pts := make(plotter.XYs, len(res.T))
	for i := range res.T {
		pts[i] = plotter.XY{X: res.T[i], Y: res.TPS[i]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("soak plot: %w", err)
	}
	sc.Shape = draw.CircleGlyph{}
	sc.Radius = vg.Points(1.5)
	sc.Color = color.RGBA{R: 90, G: 120, B: 200, A: 255}
	p.Add(sc)
	page.AddLegend(p, "tx/s (1 s bins)", sc)
	f := res.Fit
	if len(res.T) > 0 && f.Tau > 0 {
		n := 200
		curve := make(plotter.XYs, n+1)
		end := res.T[len(res.T)-1]
		for i := 0; i <= n; i++ {
			x := end * float64(i) / float64(n)
			curve[i] = plotter.XY{X: x, Y: f.A + f.B*math.Exp(-x/f.Tau)}
		}
		l, _ := plotter.NewLine(curve)
		l.Color, l.Width = color.RGBA{R: 200, G: 40, B: 40, A: 255}, vg.Points(2)
		p.Add(l)
		page.AddLegend(p, "fit a + b·exp(−t/τ)", l)
		if f.Decays {
			// Without a decay, a is an extrapolation of a slope: not a floor.
			floor, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: f.A}, {X: end, Y: f.A}})
			floor.Color, floor.Dashes = color.Gray{Y: 90}, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(floor)
			page.AddLegend(p, "floor a", floor)
		}
	}
	png, err := page.RenderPNG(p)
	if err != nil {
		return nil, fmt.Errorf("soak plot: %w", err)
	}
	return png, nil
}
