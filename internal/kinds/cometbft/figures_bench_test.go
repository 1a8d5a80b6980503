package cometbft

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
)

// BenchmarkBlockUnitsDeltaCI is what a comparison spends judging one run
// pair per latency metric: the block bootstrap's interval (judge's default
// resamples) over two runs of 60 blocks and 12 000 txs each (200 tx/s for
// 60 s, the quickstart's load).
func BenchmarkBlockUnitsDeltaCI(b *testing.B) {
	runBlocks := func(seed uint64) []figures.Block {
		rng := rand.New(rand.NewPCG(seed, 7))
		blocks := make([]figures.Block, 60)
		for i := range blocks {
			blocks[i].Txs, blocks[i].Sec = 200, 1
			for range 200 {
				blocks[i].Latencies = append(blocks[i].Latencies, 500+rng.Float64()*1000)
			}
			slices.Sort(blocks[i].Latencies)
		}
		return blocks
	}
	base, variant := runBlocks(1), runBlocks(2)
	for _, key := range []string{"latency_avg", "latency_p50", "latency_p99"} {
		b.Run(key, func(b *testing.B) {
			for b.Loop() {
				ub, _ := blockUnits(base, key)
				uv, _ := blockUnits(variant, key)
				judge.DeltaCI(ub, uv, 0, 1)
			}
		})
	}
}
