package analysis

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// Each case is a hand-built run directory in testdata/<name>; Analyze runs on
// a copy and its txs.csv, results.json and Summary are compared with
// testdata/<name>/want.* (regenerate with go test -update). The hand-computed
// figures below are checked independently of the golden files.
func TestAnalyze(t *testing.T) {
	cases := []struct {
		name    string
		acc     rundir.Accounting
		valid   bool
		reason  string // substring of one invalid reason
		tps     float64
		latency rundir.Stats // headline; zero fields are not checked
		states  string
		peak    int
	}{
		{
			// Sent at 1, 101, 201, 301 ms; blocks 10 @500, 11 @1500, 12 @2500 ms.
			// H+1 latencies: 1499, 1399, 2299, 2199 ms. Sample std: deviations
			// ±450, ±350 → sqrt(650000/3) = 465.475.
			name: "all_committed", acc: rundir.Accounting{Sent: 4, Committed: 4}, valid: true,
			tps:     4, // 4 txs over 1.000 s (block 10 to 11)
			latency: rundir.Stats{N: 4, Avg: 1849, Std: 465.475, Min: 1399, P50: 1499, P95: 2299, P99: 2299, Max: 2299},
			states:  "committed committed committed committed", peak: 2,
		},
		{
			// seq1 committed twice (duplicate); seq3 DeliverTx code 5; seq6
			// send error that reached block 21; FFFF is a warm-up tx.
			name: "mixed", acc: rundir.Accounting{Sent: 6, Committed: 3, Rejected: 2, Lost: 1, Duplicates: 1, SendErrors: 2, SendErrorsCommitted: 1},
			valid: true, tps: 1.5, // 3 txs over block 20 (1 s) to 22 (3 s)
			// H latencies: 1000−2, 1000−3, 3000−602 ms.
			latency: rundir.Stats{N: 3, Min: 997, P50: 998, Max: 2398},
			states:  "committed committed rejected rejected lost send_error send_error committed", peak: 7,
		},
		{
			name: "lost_truncated", acc: rundir.Accounting{Sent: 3, Committed: 2, Lost: 1}, valid: false,
			reason: "last line cut", tps: 2, latency: rundir.Stats{N: 2, Min: 499, Max: 1299},
			states: "committed lost committed",
		},
		{
			name: "empty", acc: rundir.Accounting{Sent: 2, Lost: 2}, valid: false, reason: "no blocks harvested",
			states: "lost lost",
		},
		{
			name: "one_block", acc: rundir.Accounting{Sent: 2, Committed: 2}, valid: false, reason: "TPS needs two block timestamps",
			latency: rundir.Stats{N: 2, Min: 1299, Max: 1399}, states: "committed committed",
		},
		{
			// Lag 40·i ms: p99 = 360 ms (load.ConnMeter: one reason per connection);
			// load.json says the sender waited 0.3 s on the node's full queue.
			name: "lagging", acc: rundir.Accounting{Sent: 10, Committed: 10}, valid: false, reason: "fell behind (the node left 16 MiB unread: the sender waited 0.3 s on it)",
			tps:    10, // 10 txs over blocks 40 @1 s to 41 @2 s
			states: strings.TrimSpace(strings.Repeat("committed ", 10)),
		},
		{
			// Ctrl-C after 8 of 20 txs; the bounded drain gave up with 3 txs
			// in the mempool: they are pending, not lost. seq4 was refused
			// by v1.0.1 with JSON-RPC code -32603.
			name: "interrupted", acc: rundir.Accounting{Sent: 8, Committed: 4, Rejected: 1, Pending: 3}, valid: false,
			reason: "3 txs pending: the interrupted run stopped waiting for the mempools after 15.0 s",
			tps:    4, latency: rundir.Stats{N: 4, Min: 1399, Max: 2299},
			states: "committed committed committed committed rejected pending pending pending",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join("testdata", tc.name)
			dir := copyDir(t, src)
			res, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accounting != tc.acc {
				t.Errorf("accounting = %+v, want %+v", res.Accounting, tc.acc)
			}
			if res.Valid != tc.valid {
				t.Errorf("valid = %v (%q), want %v", res.Valid, res.Invalid, tc.valid)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(res.Invalid, "\n"), tc.reason) {
				t.Errorf("invalid reasons %q lack %q", res.Invalid, tc.reason)
			}
			if res.TxPerSecond != tc.tps {
				t.Errorf("tps = %v, want %v", res.TxPerSecond, tc.tps)
			}
			checkStats(t, res.Latency, tc.latency)
			if tc.peak != 0 && res.PeakMempool != tc.peak {
				t.Errorf("peak mempool = %d, want %d", res.PeakMempool, tc.peak)
			}
			txs, err := os.ReadFile(filepath.Join(dir, rundir.TxsCSV.Name))
			if err != nil {
				t.Fatal(err)
			}
			var states []string
			for _, line := range strings.Split(strings.TrimSpace(string(txs)), "\n")[1:] {
				states = append(states, strings.Split(line, ",")[6])
			}
			if got := strings.Join(states, " "); got != tc.states {
				t.Errorf("states = %s, want %s", got, tc.states)
			}
			for _, g := range []struct{ got, want string }{
				{filepath.Join(dir, rundir.TxsCSV.Name), "want.txs.csv"},
				{filepath.Join(dir, rundir.ResultsFile), "want.results.json"},
			} {
				data, err := os.ReadFile(g.got)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join(src, g.want), data)
			}
			golden(t, filepath.Join(src, "want.summary.txt"), []byte(Summary(res)))
		})
	}
}

func TestAnalyzeMixedDetails(t *testing.T) {
	res, err := Analyze(copyDir(t, filepath.Join("testdata", "mixed")))
	if err != nil {
		t.Fatal(err)
	}
	// H+1 of block 22 was not harvested: the seq7 commit has no H+1 latency.
	if res.LatencyOther.N != 2 {
		t.Errorf("H+1 latencies = %d, want 2", res.LatencyOther.N)
	}
	want := map[string]rundir.NodeResult{
		"validator0": {Name: "validator0", Sent: 3, PeakMempool: 7},
		"validator1": {Name: "validator1", Sent: 3, PeakMempool: 3, Exited: true, Detail: "exit status 2"},
	}
	for _, n := range res.Nodes {
		if !reflect.DeepEqual(n, want[n.Name]) {
			t.Errorf("node %+v, want %+v", n, want[n.Name])
		}
	}
	if len(res.Load) != 2 || res.Load[0].Errors != 1 || res.Load[0].Sent != 3 || res.Load[0].LagMaxMs != 2 {
		t.Errorf("load = %+v", res.Load)
	}
	if res.BlockStats != (rundir.BlockStats{FirstHeight: 20, LastHeight: 22, Blocks: 3, AvgTxs: 2.333, MaxTxs: 3, AvgBlockSec: 1, AvgSizeBytes: 800}) {
		t.Errorf("block stats = %+v", res.BlockStats)
	}
}

// TestAnalyzeStoppedEarly: a load that did not send everything it was asked
// to (Ctrl-C, a crash) is analyzed, and marked invalid with the counts.
func TestAnalyzeStoppedEarly(t *testing.T) {
	for _, tc := range []struct {
		load    string
		invalid bool
	}{
		{`{"Expected": 6, "Attempted": 6}`, false},
		{`{"Expected": 10, "Attempted": 6}`, true},
	} {
		dir := copyDir(t, filepath.Join("testdata", "all_committed"))
		if err := os.WriteFile(filepath.Join(dir, rundir.LoadFile), []byte(tc.load), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Analyze(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(res.Invalid, "\n"), "load stopped early (interrupted?): 6 of 10 txs attempted")
		if got != tc.invalid {
			t.Errorf("load.json %s: invalid reasons %q", tc.load, res.Invalid)
		}
	}
}

// TestDrainDecidesLost: the same txs in no block are lost after a complete
// drain (mempools empty, or the whole grace period waited) and pending
// after one cut short; without drain information (older run directories)
// they are lost, as before.
func TestDrainDecidesLost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drain *rundir.Drain
		acc   rundir.Accounting
	}{
		{"cut short", &rundir.Drain{Interrupted: true, WaitedSec: 15, BoundSec: 15, GraceSec: 30}, rundir.Accounting{Sent: 8, Committed: 4, Rejected: 1, Pending: 3}},
		{"full grace", &rundir.Drain{Complete: true, WaitedSec: 30, BoundSec: 30, GraceSec: 30}, rundir.Accounting{Sent: 8, Committed: 4, Rejected: 1, Lost: 3}},
		{"interrupted but emptied", &rundir.Drain{Complete: true, Empty: true, Interrupted: true, WaitedSec: 1.2, BoundSec: 15, GraceSec: 30}, rundir.Accounting{Sent: 8, Committed: 4, Rejected: 1, Lost: 3}},
		{"no drain recorded", nil, rundir.Accounting{Sent: 8, Committed: 4, Rejected: 1, Lost: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata", "interrupted"))
			d := &rundir.Dir{Path: dir}
			h, err := d.ReadHarvest()
			if err != nil {
				t.Fatal(err)
			}
			h.Drain = tc.drain
			if err := d.WriteHarvest(h); err != nil {
				t.Fatal(err)
			}
			res, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accounting != tc.acc {
				t.Errorf("accounting = %+v, want %+v", res.Accounting, tc.acc)
			}
			if (res.Drain == nil) != (tc.drain == nil) {
				t.Errorf("results drain = %+v", res.Drain)
			}
		})
	}
}

// TestNegativeCodeSurvives: a v1.0.1 rejection (a JSON-RPC error, code
// -32603) written by the load generator's writer reaches txs.csv and
// results unchanged (it was written as 4294934693).
func TestNegativeCodeSurvives(t *testing.T) {
	dir := t.TempDir()
	w, err := load.NewSentWriter(filepath.Join(dir, rundir.SentCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []rundir.Sent{
		{Seq: 0, Node: "validator0", Hash: "00A0", Intended: 1, SentAt: 2, Ack: 3, Result: rundir.ResultRejected, Code: -32603, Log: "Internal error"},
		{Seq: 1, Node: "validator0", Hash: "00A1", Intended: 2, SentAt: 3, Ack: 4, Result: rundir.ResultRejected, Code: 2, Log: "tx invalid"},
	} {
		if err := w.Sent(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(dir); err != nil {
		t.Fatal(err)
	}
	txs, _, err := rundir.TxsCSV.ReadFile(filepath.Join(dir, rundir.TxsCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(txs) != 2 || txs[0].State != rundir.StateRejected || txs[0].Code != -32603 || txs[1].Code != 2 {
		t.Errorf("txs.csv rows = %+v", txs)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, rundir.TxsCSV.Name))
	if !strings.Contains(string(raw), ",rejected,-32603,Internal error,") {
		t.Errorf("txs.csv:\n%s", raw)
	}
}

func TestAnalyzeAccountingBug(t *testing.T) {
	// A sent row with a result analyze does not know must not slip through.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rundir.SentCSV.Name), []byte(strings.Join(rundir.SentCSV.Header, ",")+"\n0,0,n,AA,1,1,0,maybe,,\n"), 0o644)
	if _, err := Analyze(dir); err == nil {
		t.Fatal("unknown result accepted")
	}
	if _, err := Analyze(t.TempDir()); err == nil || !strings.Contains(err.Error(), "sent.csv") {
		t.Fatalf("missing sent.csv: err = %v", err)
	}
}

func TestPercentile(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(i + 1)
	}
	cases := []struct {
		values []float64
		p      float64
		want   float64
	}{
		// Nearest rank: sorted[ceil(p/100·N) − 1].
		{ten, 50, 5},          // ceil(5) = 5
		{ten, 95, 10},         // ceil(9.5) = 10
		{ten, 99, 10},         // ceil(9.9) = 10
		{ten, 10, 1},          // ceil(1) = 1
		{ten, 11, 2},          // ceil(1.1) = 2
		{twenty, 95, 19},      // ceil(19.000000000000004) must stay 19
		{twenty, 50, 10},      // ceil(10) = 10
		{[]float64{7}, 99, 7}, // one value
		{[]float64{3, 9}, 50, 3},
		{[]float64{3, 9}, 51, 9},
	}
	for _, tc := range cases {
		if got := analyze.Percentile(tc.values, tc.p); got != tc.want {
			t.Errorf("analyze.Percentile(%v, %v) = %v, want %v", tc.values, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(analyze.Percentile(nil, 50)) {
		t.Error("analyze.Percentile(nil) is not NaN")
	}
	if s := analyze.Summarize(nil); s != (rundir.Stats{}) {
		t.Errorf("analyze.Summarize(nil) = %+v", s)
	}
	// Mean 5.5; sample variance of 1..10 = 82.5/9 → std 3.028.
	if s := analyze.Summarize([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}); s != (rundir.Stats{N: 10, Avg: 5.5, Std: 3.028, Min: 1, P50: 5, P95: 10, P99: 10, Max: 10}) {
		t.Errorf("analyze.Summarize(1..10) = %+v", s)
	}
}

func checkStats(t *testing.T, got, want rundir.Stats) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"n", float64(got.N), float64(want.N)}, {"avg", got.Avg, want.Avg}, {"std", got.Std, want.Std},
		{"min", got.Min, want.Min}, {"p50", got.P50, want.P50}, {"p95", got.P95, want.P95},
		{"p99", got.P99, want.P99}, {"max", got.Max, want.Max},
	} {
		if f.want != 0 && f.got != f.want {
			t.Errorf("latency %s = %v, want %v", f.name, f.got, f.want)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	testenv.Golden(t, path, got)
}

// copyDir copies the input files of a case (not its want.* goldens) into a
// temp dir, so Analyze's outputs never land in testdata.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src)) // the run ID is the directory's name
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "want.") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestComputeTestbed: Compute runs the testbed check over the load window
// (the sends of testdata/all_committed, 1700000000.000 to .301 s) with the
// collector's host.csv and proc.csv: a quiet machine leaves the run valid;
// 1.5 cores busy beside the nodes make it testbed-bound and invalid.
func TestComputeTestbed(t *testing.T) {
	const t0 = int64(1699999999e9)
	host := func(busy float64) []rundir.Host {
		var rows []rundir.Host
		for i := range 4 {
			s := float64(i)
			rows = append(rows, rundir.Host{TimeNs: t0 + int64(i)*1e9, CPUs: 2, CPUBusySeconds: busy * s, CPUTotalSeconds: 2 * s})
		}
		return rows
	}
	var proc []rundir.Proc
	for i := range 4 {
		for k, n := range []string{"validator0", rundir.HarnessNode} {
			proc = append(proc, rundir.Proc{TimeNs: t0 + int64(i)*1e9, Node: n, PID: 10 + k, CPUSeconds: 0.25 * float64(i)})
		}
	}
	for _, c := range []struct {
		name  string
		busy  float64
		bound bool
	}{{"quiet", 0.6, false}, {"hog", 2, true}} {
		t.Run(c.name, func(t *testing.T) {
			in, err := Load(filepath.Join("testdata", "all_committed"))
			if err != nil {
				t.Fatal(err)
			}
			in.Host, in.Proc = host(c.busy), proc
			res, _, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Testbed == nil || res.Testbed.HostSec != 1 || res.Testbed.OwnCores != 0.5 {
				t.Fatalf("testbed figures %+v, want 1 s (the samples at 1700000000 and 1700000001 s around the sends), own 0.5 cores", res.Testbed)
			}
			if got := len(res.TestbedBound) > 0; got != c.bound || res.Valid == c.bound {
				t.Fatalf("testbed_bound %q valid %v, want bound %v", res.TestbedBound, res.Valid, c.bound)
			}
			if c.bound && !strings.Contains(strings.Join(res.Invalid, "\n"), "testbed-bound: load from outside the run: 1.50 cores") {
				t.Errorf("invalid reasons %q lack the outside load", res.Invalid)
			}
		})
	}
}
