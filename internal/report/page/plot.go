package page

import (
	"bytes"
	"math"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// W and H are every plot's size.
const (
	W = 8 * vg.Inch
	H = 4 * vg.Inch
)

// NewPlot is a plot in the reports' style: a grid, the legend on top.
func NewPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
}

// Percentile by nearest rank on sorted values.
func Percentile(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// legendRows counts each plot's legend entries, so the Y axis can leave room
// for the legend above the data instead of drawing it over the lines.
var (
	legendMu   sync.Mutex
	legendRows = map[*plot.Plot]int{}
)

// AddLegend adds a legend entry and counts it for MakeRoom.
func AddLegend(p *plot.Plot, name string, thumb ...plot.Thumbnailer) {
	p.Legend.Add(name, thumb...)
	legendMu.Lock()
	legendRows[p]++
	legendMu.Unlock()
}

// MakeRoom raises the top of the Y axis by the legend's height (when the
// legend sits at the top) and forgets the plot.
func MakeRoom(p *plot.Plot) {
	legendMu.Lock()
	n := legendRows[p]
	delete(legendRows, p)
	legendMu.Unlock()
	if n == 0 || !p.Legend.Top {
		return
	}
	span := p.Y.Max - p.Y.Min
	if span <= 0 {
		span = math.Max(1, math.Abs(p.Y.Max))
	}
	p.Y.Max += span * (0.09*float64(n) + 0.04)
}

// RenderPNG draws p at the reports' size.
func RenderPNG(p *plot.Plot) ([]byte, error) {
	MakeRoom(p)
	w, err := p.WriterTo(W, H, "png")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ForgetLegend returns the legend entries AddLegend counted for p and
// forgets p (a plot that is never rendered).
func ForgetLegend(p *plot.Plot) int {
	legendMu.Lock()
	defer legendMu.Unlock()
	n := legendRows[p]
	delete(legendRows, p)
	return n
}
