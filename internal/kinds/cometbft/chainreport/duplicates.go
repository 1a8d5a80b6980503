package chainreport

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// duplicatesSection is issue 23's view for the rotating test (seed 003:
// Tendermint v0.34 QA's duplicate txs): a run whose txs were committed
// more than once gets the latency distribution with every commit of a tx
// (each duplicate's latency from the tx's one send) beside the first
// commits alone. Other runs get nothing.
func (r *run) duplicatesSection(pngs map[string][]byte) []page.Block {
	if r.results == nil || r.results.Accounting.Duplicates == 0 {
		return nil
	}
	bs := []page.Block{page.Heading{Level: 3, Text: "Duplicate commits", ID: "duplicates"}}
	first, all, err := r.duplicateLatencies()
	if err != nil {
		r.note(fmt.Errorf("duplicates: %w", err))
		return append(bs, page.NoData{Reason: "block_txs.csv or txs.csv unreadable"})
	}
	if len(all) == len(first) {
		return append(bs, page.NoData{Reason: fmt.Sprintf("results.json counts %d duplicate commits, but block_txs.csv has no second commit of a committed run tx", r.results.Accounting.Duplicates)})
	}
	p := page.NewPlot(fmt.Sprintf("Latency with duplicates (%d commits) and first commits only (%d txs)", len(all), len(first)),
		"latency (ms) — "+r.latencyBlockName(), "fraction of commits ≤ latency")
	t := page.Table{Head: []string{"latencies", "commits", "p50 (ms)", "p99 (ms)", "max (ms)"}}
	for i, s := range []struct {
		name string
		v    []float64
	}{{"first commit of each tx", first}, {"every commit, duplicates included", all}} {
		xy := make(plotter.XYs, 0, 2*len(s.v))
		for j, v := range s.v {
			xy = append(xy, plotter.XY{X: v, Y: float64(j) / float64(len(s.v))}, plotter.XY{X: v, Y: float64(j+1) / float64(len(s.v))})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		if i == 1 {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		p.Add(l)
		page.AddLegend(p, s.name, l)
		t.Rows = append(t.Rows, []string{s.name, page.Itoa(len(s.v)), page.Ms(page.Percentile(s.v, 0.5)), page.Ms(page.Percentile(s.v, 0.99)), page.Ms(s.v[len(s.v)-1])})
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	p.Y.Min, p.Y.Max = 0, 1
	png, err := page.RenderPNG(p)
	if err != nil {
		r.note(fmt.Errorf("plot duplicates: %w", err))
		return bs
	}
	pngs["latency_duplicates.png"] = png
	return append(bs, page.Para{Text: fmt.Sprintf("%d txs were committed again after their first commit (a rotated node re-gossiping what it had in its mempool): "+
		"each later commit's latency is its block's time (%s) minus the tx's one send. The accounting counts a tx once, by its first commit.",
		r.results.Accounting.Duplicates, r.latencyBlockName())},

		t,
		page.Image{Alt: "Latency with and without duplicates", File: page.PlotsDir + "/latency_duplicates.png", PNG: png})
}

// duplicateLatencies: the headline latency of every committed run tx's
// first commit, and of all its commits (block_txs.csv, code 0), sorted.
func (r *run) duplicateLatencies() (first, all []float64, err error) {
	txs, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(r.dir))
	if err != nil {
		return nil, nil, err
	}
	bt, _, err := rundir.BlockTxsCSV.ReadFile(rundir.BlockTxsCSV.Path(r.dir))
	if err != nil {
		return nil, nil, err
	}
	btime := map[int64]int64{}
	for _, b := range r.blocks {
		btime[b.height] = b.timeNs
	}
	next := r.latencyColumn() == "latency_next_ms"
	sent := map[string]rundir.Tx{}
	for _, t := range txs {
		if t.State == rundir.StateCommitted {
			sent[t.Hash] = t
		}
	}
	for _, t := range sent {
		if next && t.HasNext {
			first = append(first, t.LatencyNextMs)
		} else if !next && t.HasLatency {
			first = append(first, t.LatencyMs)
		}
	}
	for _, b := range bt {
		t, ok := sent[b.Hash]
		if !ok || b.Code != 0 {
			continue
		}
		h := b.Height
		if next {
			h++
		}
		if bt, ok := btime[h]; ok {
			all = append(all, float64(bt-t.SentNs)/1e6)
		}
	}
	sort.Float64s(first)
	sort.Float64s(all)
	return first, all, nil
}
