package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// sweepScatterFile is the sweep report's plot of every tx's latency.
const sweepScatterFile = "sweep_latency_vs_send.png"

// sweepScatter is seed 003's view: every committed tx's latency against its
// send time over all cells of a grid sweep, one colour per connection count.
// What looked like single points there were clusters of thousands; here
// each cell is a band at its own place on the time axis. The cells' run
// directories are read (txs.csv); a sweep without them has no section.
func sweepScatter(dir string, x *rundir.SweepIndex) ([]page.Block, map[string][]byte, error) {
	if x.Kind == "search" {
		return nil, nil, nil
	}
	byC := map[int]plotter.XYs{}
	var origin int64
	n, cells := 0, 0
	for _, c := range x.Cells {
		if c.Status != rundir.CellDone || c.RunDir == "" {
			continue
		}
		d, err := rundir.Open(filepath.Join(dir, c.RunDir))
		if err != nil {
			continue
		}
		txs, err := headlineLatencies(d)
		if err != nil {
			continue
		}
		cells++
		for _, t := range txs {
			if origin == 0 || t.sentNs < origin {
				origin = t.sentNs
			}
			byC[c.Connections] = append(byC[c.Connections], plotter.XY{X: float64(t.sentNs), Y: t.latency})
			n++
		}
	}
	if n == 0 {
		return nil, nil, nil
	}
	p := page.NewPlot(fmt.Sprintf("Latency of every committed tx over the sweep: %d txs in %d cells", n, cells),
		"send time since the sweep's first tx (s)", "latency (ms)")
	var cs []int
	for c := range byC {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	radius := vg.Points(1.5)
	switch {
	case n > 20000:
		radius = vg.Points(0.6)
	case n > 2000:
		radius = vg.Points(1)
	}
	for i, c := range cs {
		xy := byC[c]
		for j := range xy {
			xy[j].X = float64(int64(xy[j].X)-origin) / 1e9
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, nil, fmt.Errorf("sweep scatter c=%d: %w", c, err)
		}
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		s.GlyphStyle.Radius = radius
		s.GlyphStyle.Color = plotutil.Color(i)
		p.Add(s)
		page.AddLegend(p, "c = "+strconv.Itoa(c), s)
	}
	p.Legend.Top = true
	png, err := page.RenderPNG(p)
	if err != nil {
		return nil, nil, fmt.Errorf("sweep scatter: %w", err)
	}
	bs := []page.Block{
		page.Heading{Level: 2, Text: "Every transaction's latency", ID: "scatter"},
		page.Para{Text: fmt.Sprintf("%d committed txs of %d cells, ", n, cells) + "each at its send time (seconds since the sweep's first tx; cells follow one another in run order, cool-downs between them), one colour per connection count: a cluster that a per-cell summary shows as one point is thousands of txs here. `benchnet report -o DIR --xrange …` zooms a single run's time plots."},
		page.Image{Alt: "Latency against send time over every cell", File: page.PlotsDir + "/" + sweepScatterFile, PNG: png},
	}
	return bs, map[string][]byte{sweepScatterFile: png}, nil
}

// sentLatency is a committed tx's send time and headline latency.
type sentLatency struct {
	sentNs  int64
	latency float64 // ms
}

// headlineLatencies are the committed txs of a run with a headline latency
// (txs.csv, of block H or H+1 as results.json names it; H without one).
func headlineLatencies(d *rundir.Dir) ([]sentLatency, error) {
	block := ""
	if res, err := d.ReadResults(); err == nil {
		block = res.LatencyBlock
	}
	rows, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d))
	var out []sentLatency
	for i := range rows {
		if lat, ok := rows[i].Headline(block); ok && rows[i].State == rundir.StateCommitted {
			out = append(out, sentLatency{rows[i].SentNs, lat})
		}
	}
	return out, err
}
