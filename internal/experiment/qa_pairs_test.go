package experiment

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
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

// TestPace: a lagging run's sent and committed paces come from its
// load.json and blocks.csv, so the search can tell an overloaded chain
// (the generator still sent faster than it committed, or the node left
// its queue unread) from a starved generator; a run that kept its
// schedule is left as it is.
func TestPace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var conns []rundir.LoadConn // the next run's connections
	lagging := func(sendSec float64, blockSecs ...float64) (*rundir.Dir, judge.Cell) {
		d := &rundir.Dir{Path: t.TempDir()}
		var blocks []rundir.Block
		for _, s := range blockSecs {
			blocks = append(blocks, rundir.Block{TimeNs: t0.UnixNano() + int64(s*1e9), NumTxs: 1000, RunTxs: 1000})
		}
		if err := rundir.BlocksCSV.WriteFile(rundir.BlocksCSV.Path(d), blocks); err != nil {
			t.Fatal(err)
		}
		sent := 1000 * len(blockSecs)
		end := t0.Add(time.Duration(sendSec * float64(time.Second)))
		if err := d.WriteLoad(&rundir.LoadSummary{Start: t0, End: end, Sent: sent, OK: sent, Conns: conns}); err != nil {
			t.Fatal(err)
		}
		return d, judge.Cell{Connections: 1, Rate: 3000, Offered: 3000, Sent: sent, Committed: sent, LoadValid: false}
	}
	// 10 000 txs sent in 5 s, committed 1000 per second over 10 s.
	d, c := lagging(5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	pace(d, &c)
	if c.SentRate != 2000 || c.BusyTPS != 1000 || !c.Overloaded() {
		t.Errorf("overloaded: sent %g, busy %g, overloaded %v", c.SentRate, c.BusyTPS, c.Overloaded())
	}
	// Sent over 10 s as the chain committed them: starved, not overloaded.
	d, c = lagging(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	pace(d, &c)
	if c.SentRate != 1000 || c.Overloaded() {
		t.Errorf("starved: sent %g, busy %g, overloaded %v", c.SentRate, c.BusyTPS, c.Overloaded())
	}
	// Sent as slowly, but because the node left 16 MiB unread: 7.2 s of
	// the second connection's 8 s lag were the sender's wait on it.
	conns = []rundir.LoadConn{{Node: "validator0", LagMaxMs: 9000, BlockedS: 0.5}, {Node: "validator1", LagMaxMs: 8000, BlockedS: 7.2}}
	d, c = lagging(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	pace(d, &c)
	if c.SentRate != 1000 || c.BlockedShare != 0.9 || !c.Overloaded() {
		t.Errorf("pushed back: sent %g, busy %g, blocked share %g, overloaded %v", c.SentRate, c.BusyTPS, c.BlockedShare, c.Overloaded())
	}
	conns = nil
	d, c = lagging(5, 1, 2)
	c.LoadValid = true
	pace(d, &c)
	if c.SentRate != 0 || c.BusyTPS != 0 {
		t.Errorf("a run that kept its schedule got paces %g, %g", c.SentRate, c.BusyTPS)
	}
}

// TestPairValueBackpressure: a paired run whose generator lagged and sent
// no faster than the chain committed is the testbed's (left out), unless
// the node left the generator's queue unread: then the node set the pace
// and the run measured the build.
func TestPairValueBackpressure(t *testing.T) {
	for _, tt := range []struct {
		name    string
		blocked float64 // the sender's wait on the node, of an 8 s lag
		bound   bool
	}{
		{"starved generator", 0, true},
		{"node pushed back", 7.2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			fakeRun(t, dir, []byte(cmpManifest), 500, 800, rand.New(rand.NewPCG(3, 4)))
			d, _ := rundir.Open(dir)
			res, err := d.ReadResults()
			if err != nil {
				t.Fatal(err)
			}
			lag := "send lag p99 8 s > 1 s"
			res.GeneratorInvalid, res.Invalid, res.Valid = []string{lag}, []string{lag}, false
			if err := d.WriteResults(res); err != nil {
				t.Fatal(err)
			}
			ls, err := d.ReadLoad()
			if err != nil {
				t.Fatal(err)
			}
			ls.Valid, ls.Invalid = false, []string{lag}
			ls.Conns = []rundir.LoadConn{{Node: "validator0", TargetRate: 1000, LagMaxMs: 8000, BlockedS: tt.blocked}}
			if err := d.WriteLoad(ls); err != nil {
				t.Fatal(err)
			}
			tput, why := pairValue(dir, nil, 1, 1000)
			if bound := strings.HasPrefix(why, rundir.TestbedBoundPrefix); bound != tt.bound || !(tput > 400 && tput < 600) {
				t.Errorf("pairValue = %.1f tx/s, %q; want testbed-bound %v at ~500 tx/s", tput, why, tt.bound)
			}
		})
	}
}
