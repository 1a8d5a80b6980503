package experiment

import (
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

func TestBusySpan(t *testing.T) {
	const s = int64(1e9) // the load's start
	blk := func(sec float64, run int) rundir.Block {
		return rundir.Block{TimeNs: s + int64(sec*1e9), NumTxs: run, RunTxs: run}
	}
	cases := []struct {
		name   string
		blocks []rundir.Block
		txs    int
		spanS  float64
	}{
		{"drained backlog, no stragglers", []rundir.Block{blk(1, 400), blk(2, 400), blk(3, 200)}, 1000, 3},
		// 5 of 1000 txs commit 20 s after the backlog drained: the span
		// ends with the block that brought the count to 990.
		{"stragglers past 99 %", []rundir.Block{blk(1, 400), blk(2, 400), blk(3, 195), blk(23, 5)}, 995, 3},
		// The straggler block holds more than 1 %: it is part of the span.
		{"a late block over 1 %", []rundir.Block{blk(1, 400), blk(2, 400), blk(3, 180), blk(23, 20)}, 1000, 23},
		// A header's time is BFT time, a block behind the clock: the
		// first block's can precede the load's start, its txs count.
		{"out of order, empty blocks, a header time before the start", []rundir.Block{blk(3, 200), blk(-1, 50), blk(2, 0), blk(1, 800)}, 1050, 3},
		{"every tx in one block timed before the start", []rundir.Block{blk(-0.5, 100)}, 0, 0},
		{"no run tx", []rundir.Block{blk(1, 0)}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			txs, span := busySpan(c.blocks, s, rundir.BusyShare)
			if txs != c.txs || span != int64(c.spanS*1e9) {
				t.Fatalf("busySpan = %d txs over %d ns, want %d over %.0f s", txs, span, c.txs, c.spanS)
			}
		})
	}
}
