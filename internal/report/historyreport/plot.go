package historyreport

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/report/page"
)

var (
	red  = color.RGBA{R: 200, G: 40, B: 40, A: 255}
	grey = color.Gray{Y: 130}
)

// shortLabel is a build as the plots' axis names it: a tag as written, a
// tree by its version and commit, a binary by its version.
func shortLabel(r history.BuildRef) string {
	node, ok := history.NodeBuild(r.Builds)
	switch {
	case !ok:
	case node.Kind == "tree":
		v, _, _ := strings.Cut(node.Version, "+")
		l := v
		if node.Commit != "" {
			l += "@" + node.Commit[:min(7, len(node.Commit))]
		}
		if node.Dirty {
			l += "+dirty"
		}
		return l
	case node.Kind == "file":
		_, v, _ := strings.Cut(node.Release, "@")
		v, _, _ = strings.Cut(v, "+")
		return "file " + v
	}
	if len(r.Label) > 28 {
		return r.Label[:27] + "…"
	}
	return r.Label
}

// metricPlot draws one metric of a line: every repeat a point over its
// build (spread a little sideways so that repeats do not hide each
// other), the counted repeats' means joined, and each change point a
// dashed line between its builds with its ratio and interval.
func metricPlot(v *View, l *Line, m *Metric) ([]byte, error) {
	title := fmt.Sprintf("%s: %s", m.Name, l.Title)
	if m.Refused != "" {
		title += " (change points refused: drift)"
	}
	p := page.NewPlot(title, "build, in release order", fmt.Sprintf("%s (%s)", m.Name, m.Unit))
	p.Title.TextStyle.Font.Size = vg.Points(10)
	short := map[string]string{}
	for _, b := range v.Builds {
		short[b.Label] = shortLabel(b)
	}
	xOf := map[string]float64{}
	var names []string
	for i, b := range l.Builds {
		xOf[b] = float64(i)
		names = append(names, short[b])
	}
	p.NominalX(names...)
	if len(names) > 5 {
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign = draw.XRight
	}
	var counted, left, means plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range m.Points {
		n := len(pt.Samples)
		w := math.Min(0.06, 0.5/float64(n))
		for j, s := range pt.Samples {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				continue // no place on the axis; the tables show it
			}
			xy := plotter.XY{X: xOf[pt.Build] + (float64(j)-float64(n-1)/2)*w, Y: s.Value}
			if s.Excluded == "" {
				counted = append(counted, xy)
			} else {
				left = append(left, xy)
			}
			lo, hi = math.Min(lo, s.Value), math.Max(hi, s.Value)
		}
		if mean, ok := pt.Mean(); ok && !math.IsNaN(mean) && !math.IsInf(mean, 0) {
			means = append(means, plotter.XY{X: xOf[pt.Build], Y: mean})
		}
	}
	for _, pts := range []struct {
		xys    plotter.XYs
		glyph  draw.GlyphStyle
		legend string
	}{
		{counted, draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(2.2), Color: plotutil.Color(0)}, "each repeat"},
		{left, draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(2.5), Color: grey}, "left out of the judgement (testbed-bound, unreadable)"},
	} {
		if len(pts.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = pts.glyph
		p.Add(sc)
		page.AddLegend(p, pts.legend, sc)
	}
	if len(means) > 0 {
		ln, err := plotter.NewLine(means)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = plotutil.Color(1), vg.Points(1.5)
		p.Add(ln)
		page.AddLegend(p, "mean of the counted repeats", ln)
	}
	if span := hi - lo; len(m.ChangePoints) > 0 && !math.IsInf(span, 0) {
		if span <= 0 {
			span = math.Max(1, math.Abs(hi))
		}
		var tags plotter.XYLabels
		for i, cp := range m.ChangePoints {
			x := xOf[cp.After] - 0.5
			ln, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo - 0.05*span}, {X: x, Y: hi + 0.05*span}})
			if err != nil {
				return nil, err
			}
			ln.Color, ln.Width, ln.Dashes = red, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(ln)
			if i == 0 {
				page.AddLegend(p, "change point: ratio after/before [95 % interval]", ln)
			}
			tags.XYs = append(tags.XYs, plotter.XY{X: x, Y: hi + 0.05*span})
			tags.Labels = append(tags.Labels, fmt.Sprintf(" ×%.3f [%.3f, %.3f]", cp.Ratio, cp.Lo, cp.Hi))
		}
		lb, err := plotter.NewLabels(tags)
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = red
		}
		p.Add(lb)
	}
	// Half a build of room either side, so the spread repeats of the
	// first and last build are not cut.
	p.X.Min, p.X.Max = -0.5, float64(len(l.Builds))-0.5
	return page.RenderPNG(p)
}
