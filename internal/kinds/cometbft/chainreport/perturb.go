package chainreport

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// heightGap splits a node's line: no answer for this long is a gap.
const heightGap = 2e9

func plotHeights(r *run) (*plot.Plot, string) {
	hs, _, err := rundir.HeightsCSV.ReadFile(rundir.HeightsCSV.Path(r.dir))
	if err != nil || len(hs) == 0 {
		return nil, "no " + rundir.HeightsCSV.Name + " (written only for runs with [[perturb]] or [rotate])"
	}
	byNode := map[string][]rundir.HeightSample{}
	for _, h := range hs {
		byNode[h.Node] = append(byNode[h.Node], h)
	}
	nodes := page.SortedKeys(byNode)
	p := page.NewPlot("latest height per node", timeAxis, "height")
	for i, n := range nodes {
		s := byNode[n]
		sort.Slice(s, func(a, b int) bool { return s[a].TimeNs < s[b].TimeNs })
		var seg plotter.XYs
		first := true
		flush := func() {
			if len(seg) == 0 {
				return
			}
			l, err := plotter.NewLine(seg)
			if err == nil {
				l.Color = plotutil.Color(i)
				l.Width = vg.Points(1.2)
				p.Add(l)
				if first && len(nodes) <= 12 {
					page.AddLegend(p, n, l)
					first = false
				}
			}
			seg = nil
		}
		for j, h := range s {
			if j > 0 && h.TimeNs-s[j-1].TimeNs > heightGap {
				flush()
			}
			seg = append(seg, plotter.XY{X: r.sec(h.TimeNs), Y: float64(h.Height)})
		}
		flush()
	}
	p.Y.Min = 0
	r.markEvents(p)
	return p, ""
}

// faultsSection: the halt, each perturbation's effect and each rotate
// cycle, computed from the run directory (analyze.ComputeFaults).
func (r *run) faultsSection(pngs map[string][]byte) []page.Block {
	in, err := analyze.LoadFaults(r.dir.Path)
	if err != nil {
		r.note(fmt.Errorf("faults: %w", err))
		return nil
	}
	fr := analyze.ComputeFaults(in)
	if fr == nil {
		return nil
	}
	bs := []page.Block{page.Heading{Level: 2, Text: "Faults", ID: "faults"}}
	if fr.Halted != "" {
		bs = append(bs, page.Para{Text: "**The chain halted and the run failed:** " + fr.Halted + "."})
	}
	if len(fr.Perturbations) > 0 {
		bs = append(bs, page.Para{Text: "Each [[perturb]] entry: the outage lasts from the action until it was undone (or the load's end). " +
			"Missed blocks are those the block rate before the outage predicts minus those committed during it; " +
			"back at tip is the time from the outage's end until the node answered within a block of the highest height, not catching up. " +
			"Txs sent to the targets during the outage are counted by end state (send errors are outside \"sent\", see the accounting)."})
		t := page.Table{Head: []string{"#", "action", "nodes", "outage s", "blocks", "blocks/s before", "missed", "next block s", "longest gap s", "back at tip s", "txs to it meanwhile"}}
		for _, p := range fr.Perturbations {
			var back []string
			for _, n := range p.Nodes {
				if v, ok := p.BackAtTip[n]; ok {
					back = append(back, n+" "+secOrNever(v))
				}
			}
			outage := page.F(float64(p.EndNs-p.StartNs)/1e9, 1)
			if !p.Undone {
				outage += " (not undone)"
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(p.Entry), p.Action, strings.Join(p.Nodes, " "), outage,
				strconv.Itoa(p.Blocks), page.F(p.BlockRate, 2), strconv.Itoa(p.Missed), secOrNever(p.FirstBlockS),
				page.F(p.LongestGapS, 1), page.DashIfEmpty(strings.Join(back, ", ")), txStates(p.Txs)})
		}
		bs = append(bs, t)
	}
	if len(fr.Cycles) > 0 {
		var ok []float64
		dups := 0
		for _, c := range fr.Cycles {
			if c.CatchUpS >= 0 {
				ok = append(ok, c.CatchUpS)
			}
			dups += c.Duplicates
		}
		sort.Float64s(ok)
		summary := fmt.Sprintf("%d rotate cycles, %d caught up", len(fr.Cycles), len(ok))
		if len(ok) > 0 {
			summary += fmt.Sprintf("; catch-up time min %s s, median %s s, max %s s", page.F(ok[0], 1), page.F(ok[len(ok)/2], 1), page.F(ok[len(ok)-1], 1))
		}
		summary += fmt.Sprintf("; %d duplicate commits while ephemeral nodes ran.", dups)
		bs = append(bs, page.Heading{Level: 3, Text: "Rotating nodes", ID: ""}, page.Para{Text: summary})
		t := page.Table{Head: []string{"cycle", "node", "catch-up s", "height reached", "tip", "blocks synced/s", "kept until s", "duplicates", "error"}}
		for _, c := range fr.Cycles {
			stop := "-"
			if c.StopNs > 0 {
				stop = page.F(r.sec(c.StopNs), 1)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(c.Cycle), c.Node, secOrNever(c.CatchUpS), strconv.FormatInt(c.Height, 10),
				strconv.FormatInt(c.Tip, 10), page.F(c.BlocksPerS, 1), stop, strconv.Itoa(c.Duplicates), page.DashIfEmpty(c.Error)})
		}
		bs = append(bs, t)
	}
	bs = append(bs, page.Heading{Level: 3, Text: "Node heights", ID: ""})
	p, reason := plotHeights(r)
	if p == nil {
		return append(bs, page.NoData{Reason: reason})
	}
	png, err := page.RenderPNG(p)
	if err != nil {
		r.note(fmt.Errorf("plot heights: %w", err))
		return bs
	}
	pngs["heights.png"] = png
	return append(bs, page.Image{Alt: "Node heights", File: page.PlotsDir + "/heights.png", PNG: png},
		page.Para{Text: "Every node's latest height as the harness polled it (every 500 ms). A gap is a node that did not answer (killed, paused, stopped, not yet started); an ephemeral node's line climbs steeply from 0 while it block-syncs, then joins the others at the tip. A flat top for every node is a halt. Dashed lines are the events."})
}

func secOrNever(v float64) string {
	if v < 0 {
		return "never"
	}
	return page.F(v, 1)
}

func txStates(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range page.SortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
