package cometbft

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/metrics"
	"github.com/benchnet/benchnet/internal/rundir"
)

// CometBFT's judged figures: what a comparison of its runs judges, per block.
// chainMetrics: a CometBFT run's figures are metrics.Metrics, per block.
type chainMetrics struct{}

func (chainMetrics) Metrics() []judge.Metric                      { return metrics.Metrics }
func (chainMetrics) ReadFigures(dir string) (*figures.Run, error) { return ReadFigures(dir) }
func (chainMetrics) Unit() string                                 { return "block" }
func (chainMetrics) VariantKey(path string) bool                  { return chainVariantKey(path) }
func (chainMetrics) VariantKeys() string                          { return "releases, node config, app, transport, genesis" }
func (chainMetrics) Resampling() string {
	return "two-stage: runs, then blocks within each run (accounts for the accounts workload's inclusion); run values alone for peak mempool, RSS, CPU and other inclusion"
}

// ReadFigures reads a chain run directory's results.json, txs.csv,
// blocks.csv and metrics/proc.csv as a comparison judges them.
func ReadFigures(path string) (*figures.Run, error) {
	d, err := rundir.Open(path)
	if err != nil {
		return nil, err
	}
	res, err := d.ReadResults()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &figures.Run{Dir: path, Results: res, LatencyBlock: res.LatencyBlock, Values: map[string]float64{}}
	set := func(k string, v float64, ok bool) {
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			f.Values[k] = v
		}
	}
	committed := res.Accounting.Committed
	set("tps", res.TxPerSecond, committed > 0 && res.TxPerSecond > 0)
	set("latency_avg", res.Latency.Avg, res.Latency.N > 0)
	set("latency_p50", res.Latency.P50, res.Latency.N > 0)
	set("latency_p95", res.Latency.P95, res.Latency.N > 0)
	set("latency_p99", res.Latency.P99, res.Latency.N > 0)
	set("latency_max", res.Latency.Max, res.Latency.N > 0)
	set("peak_mempool", float64(res.PeakMempool), true)
	set("blocks_per_min", 60/res.BlockStats.AvgBlockSec, res.BlockStats.AvgBlockSec > 0)
	if p := res.P2P; p != nil {
		set("p2p_bytes_per_tx", p.BytesPerTx, p.BytesPerTx > 0) // judged over run values
	}
	if acc := res.Accounts; acc != nil {
		set("inclusion", 100*acc.InclusionRatio, true)
		set("ooo_inclusion", 100*acc.OutOfOrderRatio, acc.Order == "out-of-order")
	} else if sent := res.Accounting.Sent; sent > 0 {
		set("inclusion", 100*float64(committed)/float64(sent), true)
	}

	if procs, _, err := rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d)); err == nil && len(procs) > 0 {
		rss, cpu := procFigures(procs)
		set("rss_peak", rss/(1<<20), rss > 0)
		set("cpu_per_tx", cpu*1000/float64(committed), committed > 0 && cpu > 0)
	}
	f.Blocks, err = readBlockFigures(d, res.LatencyBlock)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Inner = func(key string) (judge.Units, bool) {
		if key == "inclusion" {
			return accountUnits(res.Accounts)
		}
		return blockUnits(f.Blocks, key)
	}
	return f, nil
}

// accountUnits: an accounts workload's inclusion is redrawn over its
// accounts (one sender's txs stand or fall together: a gap strands the
// rest), as included / sent of the drawn accounts. Other workloads have no
// per-unit form of it: it is judged over run values.
func accountUnits(acc *rundir.AccountsResults) (judge.Units, bool) {
	if acc == nil || len(acc.PerAccount) == 0 {
		return judge.Units{}, false
	}
	per := acc.PerAccount
	stat := func(idx []int) float64 {
		var inc, sent int
		for _, i := range idx {
			inc += per[i].Included
			sent += per[i].Sent
		}
		return 100 * float64(inc) / float64(max(sent, 1))
	}
	return judge.Units{N: len(per), Stat: stat}, true
}

// procFigures: the largest RSS of any node process, and the CPU seconds all
// node processes used during the samples (per pid: last − first), the
// harness's own row left out.
func procFigures(rows []rundir.Proc) (rssPeak, cpuSec float64) {
	type span struct{ first, last float64 }
	spans := map[string]*span{}
	for _, p := range rows {
		if p.Node == rundir.HarnessNode {
			continue
		}
		rssPeak = math.Max(rssPeak, float64(p.RSSBytes))
		k := fmt.Sprintf("%s/%d", p.Node, p.PID)
		if s, ok := spans[k]; ok {
			s.last = p.CPUSeconds
		} else {
			spans[k] = &span{p.CPUSeconds, p.CPUSeconds}
		}
	}
	for _, s := range spans {
		cpuSec += s.last - s.first
	}
	return rssPeak, cpuSec
}

func readBlockFigures(d *rundir.Dir, latencyBlock string) ([]figures.Block, error) {
	blocks, _, err := rundir.BlocksCSV.ReadFile(rundir.BlocksCSV.Path(d))
	if err != nil {
		return nil, nil // no blocks: no per-block bootstrap
	}
	txs, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d))
	if err != nil {
		return nil, nil
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].Height < blocks[j].Height })
	byHeight := map[int64]*figures.Block{}
	var out []figures.Block
	for i := 0; i+1 < len(blocks); i++ {
		out = append(out, figures.Block{Height: blocks[i].Height, Sec: float64(blocks[i+1].TimeNs-blocks[i].TimeNs) / 1e9})
	}
	for i := range out {
		byHeight[out[i].Height] = &out[i]
	}
	for _, t := range txs {
		if t.State != rundir.StateCommitted {
			continue
		}
		b := byHeight[t.Height]
		if b == nil {
			continue
		}
		b.Txs++
		if ms, ok := t.Headline(latencyBlock); ok {
			b.Latencies = append(b.Latencies, ms)
		}
	}
	// The run's range starts at its first committed tx's block and ends at
	// its last: empty blocks outside it are warm-up or drain, not the run.
	first, last := -1, -1
	for i := range out {
		if out[i].Txs > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
		sort.Float64s(out[i].Latencies)
	}
	if first < 0 {
		return nil, nil
	}
	return out[first : last+1], nil
}

// blockUnits are the bootstrap units of one run for metric key: its blocks,
// the statistic recomputed from the resampled ones. ok is false for a
// metric that has no per-block form (peaks, RSS, CPU).
func blockUnits(blocks []figures.Block, key string) (judge.Units, bool) {
	if (key == "tps" || key == "blocks_per_min") && len(blocks) >= 5 {
		// The first and last block of the load hold part of a block's
		// txs over a whole interval: rate noise, not the chain's rate.
		blocks = blocks[1 : len(blocks)-1]
	}
	n := len(blocks)
	sums := func(idx []int) (txs int, sec float64) {
		for _, i := range idx {
			txs += blocks[i].Txs
			sec += blocks[i].Sec
		}
		return
	}
	// The pooled latencies are sorted once, and only for a percentile.
	pct := func(q float64) func(idx []int) float64 {
		lists := make([][]float64, n)
		for b := range blocks {
			lists[b] = blocks[b].Latencies
		}
		return judge.NewPooled(lists).Pct(q)
	}
	var stat func(idx []int) float64
	switch key {
	case "tps":
		stat = func(idx []int) float64 {
			txs, sec := sums(idx)
			return float64(txs) / sec
		}
	case "blocks_per_min":
		stat = func(idx []int) float64 {
			_, sec := sums(idx)
			return 60 * float64(len(idx)) / sec
		}
	case "latency_avg":
		// Each block's sum once: a resample adds n sums, not every tx.
		sum := make([]float64, n)
		for b := range blocks {
			for _, l := range blocks[b].Latencies {
				sum[b] += l
			}
		}
		stat = func(idx []int) float64 {
			var s float64
			var c int
			for _, i := range idx {
				s += sum[i]
				c += len(blocks[i].Latencies)
			}
			return s / float64(c)
		}
	case "latency_p50":
		stat = pct(50)
	case "latency_p95":
		stat = pct(95)
	case "latency_p99":
		stat = pct(99)
	case "latency_max":
		stat = func(idx []int) float64 {
			m := math.NaN()
			for _, i := range idx {
				if k := len(blocks[i].Latencies); k > 0 && !(blocks[i].Latencies[k-1] <= m) {
					m = blocks[i].Latencies[k-1]
				}
			}
			return m
		}
	default:
		return judge.Units{}, false
	}
	return judge.Units{N: n, Stat: stat}, n > 0
}

// chainVariantKey reports whether a dotted manifest path is one a variant
// of a CometBFT testnet exists to change.
func chainVariantKey(path string) bool {
	parts := strings.Split(path, ".")
	switch {
	case parts[0] == "name" || parts[0] == "genesis" || parts[0] == "variants":
		return true
	case parts[0] == "node" && len(parts) >= 3:
		return slices.Contains([]string{"release", "config", "app", "app_mempool", "transport", "mempool"}, parts[2])
	}
	return false
}
