package analysis

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Summary renders the results as the plain, aligned table printed at the end
// of a run, in the spirit of the CometBFT QA and Initia tables.
func Summary(r *rundir.Results) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	a := r.Accounting
	pct := func(n int) string {
		if a.Sent == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f %%", 100*float64(n)/float64(a.Sent))
	}
	row := func(k, v, note string) { fmt.Fprintf(w, "%s\t%s\t%s\n", k, v, note) }
	row("run", r.RunID, "")
	if rc := r.Recovered; rc != nil {
		row("recovered", "yes", "from a run that did not finish: blocks read offline from "+rc.Node+"'s store ("+rc.Method+", "+rc.Release+")")
	}
	row("sent", fmt.Sprint(a.Sent), "ok + rejected; = committed + rejected + lost + pending")
	row("committed", fmt.Sprint(a.Committed), pct(a.Committed))
	row("rejected", fmt.Sprint(a.Rejected), pct(a.Rejected))
	row("lost", fmt.Sprint(a.Lost), pct(a.Lost))
	row("pending", fmt.Sprint(a.Pending), pct(a.Pending))
	row("duplicates", fmt.Sprint(a.Duplicates), "extra commits, not in committed")
	se := "not in sent"
	if a.SendErrorsCommitted > 0 {
		se = fmt.Sprintf("not in sent; %d of them reached a block", a.SendErrorsCommitted)
	}
	row("send errors", fmt.Sprint(a.SendErrors), se)
	tps, counted := "-", float64(r.TotalIncluded)
	if r.DurationSec > 0 {
		tps, counted = fmt.Sprintf("%.1f tx/s", r.TxPerSecond), math.Round(r.TxPerSecond*r.DurationSec)
	}
	row("TPS", tps, fmt.Sprintf("from block times: %.0f txs over %.3f s", counted, r.DurationSec))
	if d := r.Drain; d != nil {
		row("drain", drainState(d), drainNote(d))
	}
	bs := r.BlockStats
	blocks := ""
	if bs.Blocks > 0 {
		blocks = fmt.Sprintf("heights %d-%d, %.3f s/block, avg %.1f txs (max %d), avg %.0f B",
			bs.FirstHeight, bs.LastHeight, bs.AvgBlockSec, bs.AvgTxs, bs.MaxTxs, bs.AvgSizeBytes)
	}
	row("blocks", fmt.Sprint(bs.Blocks), blocks)
	row("peak mempool", fmt.Sprint(r.PeakMempool), "txs, any node, polled")
	runViewRows(r, row) // runviews.go
	row("latency block", r.LatencyBlock, "header time ending a tx's latency")
	valid := "yes"
	if !r.Valid {
		valid = "NO"
	}
	row("valid", valid, "")
	if v, note, ok := analyze.LatencyRow(r); ok {
		row("latency valid", v, note)
	}
	w.Flush()
	for _, n := range r.Nodes {
		if n.Exited {
			fmt.Fprintf(&b, "  node %s exited during the run: %s\n", n.Name, n.Detail)
		}
	}
	for _, reason := range r.Invalid {
		fmt.Fprintf(&b, "  invalid: %s\n", reason)
	}
	if r.LatencyInvalid != "" {
		fmt.Fprintf(&b, "  latency invalid: %s\n", r.LatencyInvalid)
	}

	b.WriteString("\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "latency ms\tn\tavg\tstd\tmin\tp50\tp95\tp99\tmax\t")
	other := "H+1"
	if r.LatencyBlock == "H+1" {
		other = "H"
	}
	for _, l := range []struct {
		name string
		s    rundir.Stats
	}{{r.LatencyBlock + " (headline)", r.Latency}, {other, r.LatencyOther}} {
		if l.s.N == 0 {
			fmt.Fprintf(w, "%s\t0\t-\t-\t-\t-\t-\t-\t-\t\n", l.name)
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			l.name, l.s.N, l.s.Avg, l.s.Std, l.s.Min, l.s.P50, l.s.P95, l.s.P99, l.s.Max)
	}
	w.Flush()
	if r.NegativeLatencies > 0 {
		fmt.Fprintf(&b, "  %d negative %s latencies (block time before send time)\n", r.NegativeLatencies, r.LatencyBlock)
	}
	if r.Accounts != nil {
		b.WriteString(accountsSummary(r.Accounts)) // accounts.go
	}
	// tabwriter pads the last column; trailing blanks only make diffs noisy.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func drainState(d *rundir.Drain) string {
	if d.Complete {
		return "complete"
	}
	return "cut short"
}

// drainNote says how the wait for the mempools ended, and so what lost
// means in this run.
func drainNote(d *rundir.Drain) string {
	var s string
	switch {
	case d.Empty:
		s = fmt.Sprintf("mempools empty after %.1f s", d.WaitedSec)
	case d.Complete:
		s = fmt.Sprintf("mempools not empty after the full grace of %.1f s", d.GraceSec)
	default:
		s = fmt.Sprintf("interrupted: gave up after %.1f s (bound %.1f s)", d.WaitedSec, d.BoundSec)
	}
	if d.Left != "" {
		s += "; left: " + d.Left
	}
	return s
}
