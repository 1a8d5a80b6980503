package analysis

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/rundir"
)

// benchTxs is the size of a QA cell the issue asks for: 1 M txs.
const benchTxs = 1_000_000

// writeBenchDir writes a synthetic run directory of n sent txs, all
// committed over n/1000 blocks, through the rundir codecs: sent.csv in
// completion order over 4 nodes and 2 connections, blocks.csv,
// block_txs.csv, harvest.json and mempool.csv.
func writeBenchDir(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	d := &rundir.Dir{Path: dir}
	const t0 = int64(1_700_000_000_000_000_000)
	const perBlock = 1000
	nodes := []string{"validator0", "validator1", "validator2", "validator3"}
	sent := make([]rundir.Sent, n)
	txs := make([]rundir.BlockTx, n)
	for i := range sent {
		intended := t0 + int64(i)*700_000 // ~1400 tx/s
		hash := load.TxHash(fmt.Appendf(nil, "bench-%d", i))
		sent[i] = rundir.Sent{Seq: uint64(i), Conn: i % 2, Node: nodes[i%4], Hash: hash,
			Intended: intended, SentAt: intended + 30_000, Ack: intended + 400_000, Result: rundir.ResultOK}
		txs[i] = rundir.BlockTx{Height: 10 + int64(i/perBlock), Index: i % perBlock, Hash: hash}
	}
	// Completion order is not seq order: swap neighbours.
	for i := 0; i+1 < n; i += 2 {
		sent[i], sent[i+1] = sent[i+1], sent[i]
	}
	nb := (n + perBlock - 1) / perBlock
	blocks := make([]rundir.Block, 0, nb+1)
	for h := range nb + 1 {
		blocks = append(blocks, rundir.Block{Height: 10 + int64(h), TimeNs: t0 + int64(h+1)*700_000_000,
			NumTxs: perBlock, RunTxs: perBlock, SizeBytes: perBlock * 1100, Proposer: "2D47F377EA1C32EE81D072E397C4DA315DEAEDEE"})
	}
	var mem []rundir.MempoolSample
	for s := range 700 {
		for _, nd := range nodes {
			mem = append(mem, rundir.MempoolSample{TimeNs: t0 + int64(s)*1e9, Node: nd, Size: 500})
		}
	}
	for _, err := range []error{
		rundir.SentCSV.WriteFile(rundir.SentCSV.Path(d), sent),
		rundir.BlocksCSV.WriteFile(rundir.BlocksCSV.Path(d), blocks),
		rundir.BlockTxsCSV.WriteFile(rundir.BlockTxsCSV.Path(d), txs),
		rundir.MempoolCSV.WriteFile(rundir.MempoolCSV.Path(d), mem),
		d.WriteHarvest(&rundir.Harvest{From: 10, To: 10 + int64(nb) - 1, NextHeight: 10 + int64(nb),
			Drain: &rundir.Drain{Complete: true, Empty: true}}),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkAnalyze1M analyses a cell of 1 M txs end to end (read, match,
// write txs.csv and results.json) and reports µs per tx; CometBFT's
// `loadtime report` reading its blockstore took ~12 µs per tx here
// (31,328 txs in 0.38 s).
//
//	go test -run - -bench Analyze1M -benchmem -benchtime 3x ./internal/analyze
func BenchmarkAnalyze1M(b *testing.B) {
	dir := writeBenchDir(b, benchTxs)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Analyze(dir)
		if err != nil {
			b.Fatal(err)
		}
		if res.Accounting.Committed != benchTxs {
			b.Fatalf("committed %d of %d (%s)", res.Accounting.Committed, benchTxs, filepath.Base(dir))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/benchTxs, "us/tx")
}
