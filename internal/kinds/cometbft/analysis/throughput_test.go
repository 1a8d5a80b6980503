package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// throughputInput is a run whose whole offered load was committed: n txs
// sent at rate tx/s from t0, blocks at the given header times, each tx in
// the first block whose time is at or after its send (block H holds the txs
// sent during (time(H−1), time(H)]). Times are ns.
func throughputInput(n int, rate float64, t0 int64, blockTimes []int64) *Input {
	in := &Input{RunID: "throughput"}
	b := 0
	counts := make([]int, len(blockTimes))
	for k := 0; k < n; k++ {
		at := t0 + int64(float64(k)*1e9/rate)
		// The pacer's error: the write starts up to 0.7 ms late.
		sent := at + int64(k%8)*100_000
		for blockTimes[b] < sent {
			b++
		}
		h := fmt.Sprintf("%064X", k)
		in.Sent = append(in.Sent, rundir.Sent{Seq: uint64(k), Node: "validator0", Hash: h, Intended: at, SentAt: sent, Ack: sent + 1e6, Result: rundir.ResultOK})
		in.BlockTxs = append(in.BlockTxs, rundir.BlockTx{Height: int64(b + 1), Index: counts[b], Hash: h})
		counts[b]++
	}
	for i, t := range blockTimes {
		in.Blocks = append(in.Blocks, rundir.Block{Height: int64(i + 1), TimeNs: t, NumTxs: counts[i], RunTxs: counts[i]})
	}
	return in
}

// regularBlocks are n header times every interval ns from start.
func regularBlocks(n int, start, interval int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = start + int64(i)*interval
	}
	return out
}

// irregularBlocks are n header times whose intervals are drawn uniformly
// from [lo, hi) ns (seeded).
func irregularBlocks(n int, lo, hi int64, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]int64, n)
	for i := 1; i < n; i++ {
		out[i] = out[i-1] + lo + rng.Int64N(hi-lo)
	}
	return out
}

// TestThroughputOfferedRate: a run that committed its whole offered load
// reads the offered rate, within 0.5 %, whatever the block times and the
// load's phase against them. The figures of the formulas it replaces are
// in each case's comment and the first is checked: committed / (time(last
// block with a run tx) − time(first)) (the former, N blocks over N−1
// intervals whose edge ones the load only partly fills) and committed /
// (time(last) − time(block before the first)) (N over N, counting the
// unfilled parts of both edge intervals).
func TestThroughputOfferedRate(t *testing.T) {
	const ms = int64(1e6)
	cases := []struct {
		name     string
		n        int
		rate     float64
		t0       int64
		blocks   []int64
		oldFails bool // the former formula misses by more than 0.5 %
	}{
		// The reported case: 12000 txs at 200 tx/s, 0.96 s blocks, the load
		// starting 0.2 s into an interval. Former: 12000 / 59.52 s = 201.613
		// tx/s (+0.81 %); from the block before: 198.413 (−0.79 %); now
		// 11712 txs / 58.56 s = 200.000.
		{"regular 0.96 s, early phase", 12000, 200, 10*960*ms + 200*ms, regularBlocks(90, 0, 960*ms), true},
		// The other phase (0.6 s in): former 198.413 (−0.79 %), from the
		// block before 195.312 (−2.34 %), now 200.000.
		{"regular 0.96 s, late phase", 12000, 200, 10*960*ms + 600*ms, regularBlocks(90, 0, 960*ms), true},
		// 1 s blocks dividing the load's 60 s: the former is exact (the two
		// partial blocks add up to one), from the block before 12000 / 61 s
		// = 196.721 (−1.64 %); now 200.000.
		{"regular 1 s", 12000, 200, 10*1000*ms + 300*ms, regularBlocks(90, 0, 1000*ms), false},
		// Fast blocks, a short load (3000 txs at 100 tx/s, 0.35 s blocks):
		// former 99.668 (−0.33 %), from the block before 98.522 (−1.48 %),
		// now 100.000.
		{"regular 0.35 s, short load", 3000, 100, 20*350*ms + 300*ms, regularBlocks(200, 0, 350*ms), false},
		// Irregular blocks, intervals uniform in [0.4, 1.6) s. This draw:
		// former 200.174 (+0.09 %), from the block before 195.503
		// (−2.25 %), now 199.993.
		{"irregular 0.4–1.6 s", 12000, 200, 12 * 1000 * ms, irregularBlocks(120, 400*ms, 1600*ms, 7), false},
		// Another draw: former 201.723 (+0.86 %), from the block before
		// 196.745 (−1.63 %), now 199.998.
		{"irregular 0.4–1.6 s, other draw", 12000, 200, 12*1000*ms + 500*ms, irregularBlocks(120, 400*ms, 1600*ms, 11), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := throughputInput(c.n, c.rate, c.t0, c.blocks)
			res, rows, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accounting.Committed != c.n {
				t.Fatalf("committed %d of %d", res.Accounting.Committed, c.n)
			}
			dev := func(v float64) float64 { return (v - c.rate) / c.rate }
			if d := dev(res.TxPerSecond); math.Abs(d) > 0.005 {
				t.Errorf("tx_per_second = %.3f, offered %.0f: %+.2f %% (duration_sec %.3f)", res.TxPerSecond, c.rate, 100*d, res.DurationSec)
			}
			// duration_sec × tx_per_second is the count the rate is of: the
			// committed txs less those of the two edge blocks.
			firstH, lastH := int64(math.MaxInt64), int64(0)
			edge := map[int64]int{}
			for _, r := range rows {
				firstH, lastH = min(firstH, r.Height), max(lastH, r.Height)
				edge[r.Height]++
			}
			if got, want := math.Round(res.TxPerSecond*res.DurationSec), float64(c.n-edge[firstH]-edge[lastH]); math.Abs(got-want) > 1 {
				t.Errorf("tx_per_second × duration_sec = %.0f, want the %0.f txs of the blocks between %d and %d", got, want, firstH, lastH)
			}
			var tFirst, tLast, tBefore int64
			for _, b := range in.Blocks {
				switch b.Height {
				case firstH:
					tFirst = b.TimeNs
				case lastH:
					tLast = b.TimeNs
				case firstH - 1:
					tBefore = b.TimeNs
				}
			}
			old := float64(c.n) / (float64(tLast-tFirst) / 1e9)
			prev := float64(c.n) / (float64(tLast-tBefore) / 1e9)
			t.Logf("now %.3f tx/s (%+.2f %%) over %.3f s; former %.3f (%+.2f %%); from the block before %.3f (%+.2f %%)",
				res.TxPerSecond, 100*dev(res.TxPerSecond), res.DurationSec, old, 100*dev(old), prev, 100*dev(prev))
			if oldFails := math.Abs(dev(old)) > 0.005; oldFails != c.oldFails {
				t.Errorf("former formula %.3f tx/s (%+.2f %%): fails 0.5 %% = %v, the case says %v", old, 100*dev(old), oldFails, c.oldFails)
			}
		})
	}
}

// TestThroughputEdges: two blocks of run txs have no full block between
// them (their txs over the one interval), one block has no rate.
func TestThroughputEdges(t *testing.T) {
	const ms = int64(1e6)
	in := throughputInput(100, 100, 900*ms, regularBlocks(4, 0, 1000*ms)) // txs in blocks 2 and 3
	res, _, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.DurationSec != 1 || res.TxPerSecond != 100 {
		t.Errorf("two blocks: duration_sec %v, tx_per_second %v; want 1, 100", res.DurationSec, res.TxPerSecond)
	}
	in = throughputInput(50, 100, 100*ms, regularBlocks(3, 0, 1000*ms)) // all in block 2
	if res, _, err = Compute(in); err != nil {
		t.Fatal(err)
	}
	if res.DurationSec != 0 || res.TxPerSecond != 0 || res.Valid {
		t.Errorf("one block: duration_sec %v, tx_per_second %v, valid %v; want 0, 0, false", res.DurationSec, res.TxPerSecond, res.Valid)
	}
}
