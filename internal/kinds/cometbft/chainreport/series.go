package chainreport

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchnet/benchnet/internal/report/page"
)

// maxNodeLines is how many nodes a plot draws one line each for; past it
// lines are grouped by role (mean and maximum per role), as a legend of 200
// node names is unreadable and their lines a solid band.
const maxNodeLines = 12

// harnessRole is the role of the harness process in proc.csv.
const harnessRole = "harness"

// roleOf is a node's role from plan.json ("validator", "full", "seed");
// the harness process is "harness"; a node the plan does not know is "node".
func (r *run) roleOf(node string) string {
	if node == "benchnet" {
		return harnessRole
	}
	if r.plan != nil {
		for _, n := range r.plan.Nodes {
			if n.Name == node {
				return n.Role
			}
		}
	}
	return "node"
}

// step is the typical time between two samples of one series: the median
// of the gaps over all series (1 when there are none).
func step(series map[string]plotter.XYs) float64 {
	var gaps []float64
	for _, xy := range series {
		for i := 1; i < len(xy); i++ {
			if d := xy[i].X - xy[i-1].X; d > 0 {
				gaps = append(gaps, d)
			}
		}
	}
	if len(gaps) == 0 {
		return 1
	}
	sort.Float64s(gaps)
	return gaps[len(gaps)/2]
}

// aggregate combines the series of nodes into one per sampling round: the
// samples of one round land a few ms apart on different nodes, so the time
// axis is cut into bins of one sampling step, and each bin's values (at most
// one per node, the latest) are combined by f. The points sit at the bins'
// mean sample time.
func aggregate(nodes []string, series map[string]plotter.XYs, f func([]float64) float64) plotter.XYs {
	st := step(series)
	type bin struct {
		vals  map[string]float64
		times float64
		n     int
	}
	bins := map[int64]*bin{}
	for _, n := range nodes {
		for _, p := range series[n] {
			k := int64(math.Round(p.X / st))
			b := bins[k]
			if b == nil {
				b = &bin{vals: map[string]float64{}}
				bins[k] = b
			}
			b.vals[n] = p.Y
			b.times += p.X
			b.n++
		}
	}
	keys := make([]int64, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make(plotter.XYs, 0, len(keys))
	for _, k := range keys {
		b := bins[k]
		vals := make([]float64, 0, len(b.vals))
		for _, n := range page.SortedKeys(b.vals) {
			vals = append(vals, b.vals[n])
		}
		out = append(out, plotter.XY{X: b.times / float64(b.n), Y: f(vals)})
	}
	return out
}

func mean(v []float64) float64 { return sum(v) / float64(len(v)) }

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// drawNodes draws a per-node metric. Up to maxNodeLines nodes: one thin
// line each, and with avg an average line over them (black, dashed). Past
// that: per role, its mean (solid) and maximum (dashed). It returns a note
// on how the lines are drawn, for the plot's title.
func (r *run) drawNodes(p *plot.Plot, nodes []string, series map[string]plotter.XYs, avg bool) string {
	if len(nodes) <= maxNodeLines {
		addLines(p, nodes, series)
		if avg && len(nodes) > 1 {
			var nodeOnly []string
			for _, n := range nodes {
				if r.roleOf(n) != harnessRole {
					nodeOnly = append(nodeOnly, n)
				}
			}
			if l, err := plotter.NewLine(aggregate(nodeOnly, series, mean)); err == nil {
				// Dashed, so node lines equal to it still show.
				l.Color = color.Black
				l.Width = vg.Points(2)
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
				p.Add(l)
				page.AddLegend(p, "average", l)
			}
		}
		return "per node"
	}
	byRole := map[string][]string{}
	for _, n := range nodes {
		byRole[r.roleOf(n)] = append(byRole[r.roleOf(n)], n)
	}
	for i, role := range page.SortedKeys(byRole) {
		members := byRole[role]
		for _, s := range []struct {
			name   string
			f      func([]float64) float64
			dashed bool
		}{{"mean", mean, false}, {"max", maxOf, true}} {
			l, err := plotter.NewLine(aggregate(members, series, s.f))
			if err != nil {
				continue
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			if s.dashed {
				l.Width = vg.Points(1)
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(l)
			page.AddLegend(p, fmt.Sprintf("%s %s (%d)", role, s.name, len(members)), l)
		}
	}
	return "by role"
}
