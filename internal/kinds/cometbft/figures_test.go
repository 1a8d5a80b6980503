package cometbft

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/figures"
)

// The weighted percentile of resampled blocks is the nearest-rank
// percentile of their latencies put together.
func TestBlockPercentileMatchesConcatenation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	blocks := make([]figures.Block, 7)
	for b := range blocks {
		for i := 0; i < 1+rng.IntN(30); i++ {
			blocks[b].Latencies = append(blocks[b].Latencies, float64(rng.IntN(1000)))
		}
		slices.Sort(blocks[b].Latencies)
	}
	for _, p := range []struct {
		key string
		pct float64
	}{{"latency_p50", 50}, {"latency_p95", 95}, {"latency_p99", 99}} {
		u, ok := blockUnits(blocks, p.key)
		if !ok {
			t.Fatal(p.key)
		}
		for trial := 0; trial < 50; trial++ {
			idx := make([]int, len(blocks))
			var all []float64
			for i := range idx {
				idx[i] = rng.IntN(len(blocks))
				all = append(all, blocks[idx[i]].Latencies...)
			}
			slices.Sort(all)
			if got, want := u.Stat(idx), analyze.Percentile(all, p.pct); got != want {
				t.Fatalf("%s of %v: %v, want %v", p.key, idx, got, want)
			}
		}
	}
}

// compare is a registered experiment kind, strictly decoded like the others.
