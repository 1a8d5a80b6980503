package harvest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeChain is a fake CometBFT RPC. Its answers are the real v1.0.1 answers
// in testdata (captured from `cometbft start --proxy_app=kvstore`) with the
// height, time, txs and results swapped in, so the shape stays the real one.
type fakeChain struct {
	t      *testing.T
	mu     sync.Mutex
	t0     time.Time
	blocks map[int64][][]byte // height → txs
	codes  map[string]uint32  // tx → exec code
	height int64              // latest height (status)
	// executed, when set, is the last height whose results are stored:
	// above it the node has the block but is still executing it.
	executed int64
	mempool  func() int  // num_unconfirmed_txs answer
	appPool  func() int  // abci_query "/pool" answer (an app-side mempool)
	fail     atomic.Bool // answer 500 to everything
	calls    atomic.Int64
}

func (f *fakeChain) blockTime(h int64) time.Time { return f.t0.Add(time.Duration(h) * time.Second) }

func template(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "v1.0.1-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fakeChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.fail.Load() {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h, _ := strconv.ParseInt(r.URL.Query().Get("height"), 10, 64)
	var env map[string]any
	switch r.URL.Path {
	case "/status":
		env = template(f.t, "status")
		si := env["result"].(map[string]any)["sync_info"].(map[string]any)
		si["latest_block_height"] = strconv.FormatInt(f.height, 10)
	case "/abci_query":
		if r.URL.Query().Get("path") != `"/pool"` || f.appPool == nil {
			env = map[string]any{"jsonrpc": "2.0", "id": -1, "result": map[string]any{"response": map[string]any{"code": 1, "log": "unknown path"}}}
			break
		}
		v := binary.BigEndian.AppendUint64(nil, uint64(f.appPool()))
		env = map[string]any{"jsonrpc": "2.0", "id": -1, "result": map[string]any{"response": map[string]any{"code": 0, "value": base64.StdEncoding.EncodeToString(v)}}}
	case "/num_unconfirmed_txs":
		env = template(f.t, "num_unconfirmed_txs")
		env["result"].(map[string]any)["n_txs"] = strconv.Itoa(f.mempool())
	case "/block":
		if h > f.height {
			env = map[string]any{"jsonrpc": "2.0", "id": -1, "error": map[string]any{"code": -32603, "message": "Internal error",
				"data": fmt.Sprintf("height %d must be less than or equal to the current blockchain height %d", h, f.height)}}
			break
		}
		env = template(f.t, "block-4")
		b := env["result"].(map[string]any)["block"].(map[string]any)
		hdr := b["header"].(map[string]any)
		hdr["height"] = strconv.FormatInt(h, 10)
		hdr["time"] = f.blockTime(h).Format(time.RFC3339Nano)
		txs := []any{}
		for _, tx := range f.blocks[h] {
			txs = append(txs, base64.StdEncoding.EncodeToString(tx))
		}
		b["data"].(map[string]any)["txs"] = txs
	case "/block_results":
		if f.executed > 0 && h > f.executed {
			env = map[string]any{"jsonrpc": "2.0", "id": -1, "error": map[string]any{"code": -32603, "message": "Internal error",
				"data": fmt.Sprintf("could not find results for height #%d", h)}}
			break
		}
		env = template(f.t, "block_results-4")
		res := env["result"].(map[string]any)
		res["height"] = strconv.FormatInt(h, 10)
		proto := res["txs_results"].([]any)[0].(map[string]any)
		var out []any
		for _, tx := range f.blocks[h] {
			tr := map[string]any{}
			for k, v := range proto {
				tr[k] = v
			}
			tr["code"] = f.codes[string(tx)]
			if f.codes[string(tx)] != 0 {
				tr["log"] = "bad " + string(tx)
			}
			out = append(out, tr)
		}
		res["txs_results"] = out // null for an empty block, as the node answers
	case "/blockchain":
		lo, _ := strconv.ParseInt(r.URL.Query().Get("minHeight"), 10, 64)
		hi, _ := strconv.ParseInt(r.URL.Query().Get("maxHeight"), 10, 64)
		env = template(f.t, "blockchain-4-5")
		res := env["result"].(map[string]any)
		proto := res["block_metas"].([]any)[0].(map[string]any)
		var metas []any
		for h := min(hi, f.height); h >= lo; h-- { // the node lists metas from the top
			m := map[string]any{}
			for k, v := range proto {
				m[k] = v
			}
			hdr := map[string]any{}
			for k, v := range proto["header"].(map[string]any) {
				hdr[k] = v
			}
			hdr["height"], hdr["time"] = strconv.FormatInt(h, 10), f.blockTime(h).Format(time.RFC3339Nano)
			m["header"] = hdr
			m["block_size"] = strconv.Itoa(500 + 100*len(f.blocks[h]))
			m["num_txs"] = strconv.Itoa(len(f.blocks[h]))
			metas = append(metas, m)
		}
		res["block_metas"] = metas
	default:
		http.NotFound(w, r)
		return
	}
	json.NewEncoder(w).Encode(env)
}

func newFake(t *testing.T) (*fakeChain, *httptest.Server) {
	f := &fakeChain{t: t, t0: time.Unix(1700000000, 0).UTC(), blocks: map[int64][][]byte{}, codes: map[string]uint32{},
		mempool: func() int { return 0 }}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func TestHarvest(t *testing.T) {
	f, srv := newFake(t)
	// Heights 1..30 (more than one /blockchain page); txs in 3, 4, 25.
	f.height = 31
	f.blocks[3] = [][]byte{[]byte("a=1"), []byte("w=0")} // w=0: warm-up, not in sent.csv
	f.blocks[4] = [][]byte{[]byte("b=2"), []byte("c=3")}
	f.blocks[25] = [][]byte{[]byte("a=1")} // a=1 again: a duplicate commit
	f.codes["c=3"] = 7
	dir := t.TempDir()
	sent := strings.Join(rundir.SentCSV.Header, ",") + "\n"
	for i, tx := range []string{"a=1", "b=2", "c=3", "d=4"} {
		sent += fmt.Sprintf("%d,0,validator0,%s,1,2,3,ok,,\n", i, cometrpc.TxHash([]byte(tx)))
	}
	os.WriteFile(filepath.Join(dir, rundir.SentCSV.Name), []byte(sent), 0o644)

	res, err := HarvestWith(context.Background(), srv.URL, 1, 30, dir, Options{NextBlockWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Next || len(res.Blocks) != 31 || res.Blocks[30].Height != 31 {
		t.Fatalf("blocks: next=%v n=%d", res.Next, len(res.Blocks))
	}
	if c := res.Txs[cometrpc.TxHash([]byte("a=1"))]; len(c) != 2 || c[0].Height != 3 || c[1].Height != 25 {
		t.Errorf("a=1 commits = %+v", c)
	}
	if c := res.Txs[cometrpc.TxHash([]byte("c=3"))]; len(c) != 1 || c[0].Code != 7 || c[0].Log != "bad c=3" || c[0].Index != 1 {
		t.Errorf("c=3 commits = %+v", c)
	}

	blocks, _, err := rundir.BlocksCSV.ReadFile(filepath.Join(dir, rundir.BlocksCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	b3 := blocks[2]
	if b3.Height != 3 || b3.NumTxs != 2 || b3.RunTxs != 1 || b3.SizeBytes != 700 ||
		b3.TimeNs != f.blockTime(3).UnixNano() || b3.Proposer != "2D47F377EA1C32EE81D072E397C4DA315DEAEDEE" {
		t.Errorf("block 3 row = %+v", b3)
	}
	btx, _, err := rundir.BlockTxsCSV.ReadFile(filepath.Join(dir, rundir.BlockTxsCSV.Name))
	if err != nil || len(btx) != 5 {
		t.Fatalf("block_txs = %+v, %v", btx, err)
	}

	// The harvested directory analyzes: a=1 committed (+1 duplicate), b=2
	// committed, c=3 rejected by execution, d=4 lost.
	r, err := analysis.Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := rundir.Accounting{Sent: 4, Committed: 2, Rejected: 1, Lost: 1, Duplicates: 1}
	if r.Accounting != want {
		t.Errorf("accounting = %+v, want %+v", r.Accounting, want)
	}
	if r.BlockStats.Blocks != 30 || r.BlockStats.LastHeight != 30 {
		t.Errorf("block stats = %+v (block 31 is only for H+1 times)", r.BlockStats)
	}
}

func TestHarvestNoNextBlock(t *testing.T) {
	f, srv := newFake(t)
	f.height = 5
	dir := t.TempDir()
	res, err := HarvestWith(context.Background(), srv.URL, 2, 5, dir, Options{NextBlockWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Next || len(res.Blocks) != 4 {
		t.Errorf("next=%v blocks=%d", res.Next, len(res.Blocks))
	}
	var info rundir.Harvest
	data, _ := os.ReadFile(filepath.Join(dir, rundir.HarvestFile))
	if err := json.Unmarshal(data, &info); err != nil || info.From != 2 || info.To != 5 || info.NextHeight != 0 {
		t.Errorf("harvest.json = %s, %v", data, err)
	}
}

// TestHarvestWaitsForResults: the newest block a node reports may still be
// executing (its results are stored when FinalizeBlock returns): the
// harvest waits for them, up to NextBlockWait, rather than failing the run.
func TestHarvestWaitsForResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   time.Duration // when height 5's results appear (0: never)
		wantErr string
	}{{"executed while harvesting", 400 * time.Millisecond, ""}, {"never executed", 0, "could not find results for height #5"}} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFake(t)
			f.height, f.executed = 5, 4
			f.blocks[5] = [][]byte{[]byte("e=5")}
			if tc.after > 0 {
				time.AfterFunc(tc.after, func() { f.mu.Lock(); f.executed = 5; f.mu.Unlock() })
			}
			res, err := HarvestWith(context.Background(), srv.URL, 2, 5, t.TempDir(), Options{NextBlockWait: time.Second})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := res.Txs[cometrpc.TxHash([]byte("e=5"))]; len(c) != 1 || c[0].Height != 5 {
				t.Errorf("e=5 commits = %+v", c)
			}
		})
	}
}

func TestHarvestErrors(t *testing.T) {
	f, srv := newFake(t)
	f.height = 5
	cases := []struct {
		name     string
		from, to int64
		down     bool
		want     string
	}{
		{"beyond the chain", 3, 9, false, "must be less than or equal"},
		{"bad range", 5, 3, false, "bad height range"},
		{"node down", 1, 3, true, "HTTP 500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.fail.Store(tc.down)
			defer f.fail.Store(false)
			_, err := HarvestWith(context.Background(), srv.URL, tc.from, tc.to, t.TempDir(), Options{NextBlockWait: 100 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDrain(t *testing.T) {
	old := DrainInterval
	DrainInterval = 20 * time.Millisecond
	t.Cleanup(func() { DrainInterval = old })

	cases := []struct {
		name    string
		sizes   []int // successive answers of node a; node b always 0
		grace   time.Duration
		drained bool
		last    int
	}{
		{"already empty", []int{0}, time.Second, true, 0},
		{"drains", []int{5, 3, 1, 0}, time.Second, true, 0},
		{"stuck", []int{9}, 150 * time.Millisecond, false, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa, a := newFake(t)
			var i atomic.Int64
			fa.mempool = func() int { return tc.sizes[min(int(i.Add(1))-1, len(tc.sizes)-1)] }
			_, b := newFake(t)
			res, err := Drain(context.Background(), []Node{{Name: "a", URL: a.URL}, {Name: "b", URL: b.URL}}, tc.grace)
			if err != nil {
				t.Fatal(err)
			}
			if res.Drained != tc.drained || res.Last["a"] != tc.last || res.Last["b"] != 0 {
				t.Errorf("drain = %+v", res)
			}
			if !tc.drained && res.Waited < tc.grace {
				t.Errorf("gave up after %s < grace %s", res.Waited, tc.grace)
			}
			if tc.drained && int(i.Load()) != len(tc.sizes) {
				t.Errorf("polled a %d times, want %d", i.Load(), len(tc.sizes))
			}
		})
	}

	// A node whose app keeps the mempool reads 0 txs unconfirmed: the
	// drain waits for the app's pool instead (the upstream app mempool's
	// last txs were harvested before their block, 2026-11-29).
	fp, pn := newFake(t)
	var k atomic.Int64
	fp.mempool = func() int { return 0 }
	fp.appPool = func() int { return []int{4, 2, 0}[min(int(k.Add(1))-1, 2)] }
	res, err := Drain(context.Background(), []Node{{Name: "app", URL: pn.URL, AppPool: true}}, time.Second)
	if err != nil || !res.Drained || k.Load() != 3 {
		t.Errorf("app pool: %+v %v, polled %d times, want 3", res, err, k.Load())
	}

	// A dead node is reported, and the wait ends at grace.
	fd, d := newFake(t)
	fd.fail.Store(true)
	res, err = Drain(context.Background(), []Node{{Name: "dead", URL: d.URL}}, 100*time.Millisecond)
	if err != nil || res.Drained || len(res.Unreachable) != 1 || !strings.Contains(res.String(), "unreachable: dead") {
		t.Errorf("dead node: %+v %v (%s)", res, err, res)
	}
}

func TestMempoolPoller(t *testing.T) {
	fa, a := newFake(t)
	var n atomic.Int64
	fa.mempool = func() int { return []int{0, 4, 9, 2, 0, 0, 0, 0, 0, 0, 0, 0}[min(int(n.Add(1))-1, 11)] }
	fb, b := newFake(t)
	fb.mempool = func() int { return 1 }
	dir := t.TempDir()
	p := NewMempoolPoller(dir, []Node{{Name: "a", URL: a.URL}, {Name: "b", URL: b.URL}}, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		peak, err := p.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- peak
	}()
	for n.Load() < 6 {
		time.Sleep(10 * time.Millisecond)
	}
	fb.fail.Store(true) // b goes away: gaps, counted
	for p.Errors() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if peak := <-done; peak != 9 {
		t.Errorf("peak = %d, want 9", peak)
	}
	if pk := p.Peaks(); pk["a"] != 9 || pk["b"] != 1 {
		t.Errorf("peaks = %v", pk)
	}
	rows, _, err := rundir.MempoolCSV.ReadFile(filepath.Join(dir, rundir.MempoolCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, r := range rows {
		if r.Node == "a" && len(seq) < 4 {
			seq = append(seq, strconv.Itoa(r.Size))
		}
		if r.TimeNs <= 0 {
			t.Errorf("row %+v has no time", r)
		}
	}
	if strings.Join(seq, " ") != "0 4 9 2" {
		t.Errorf("a's first sizes = %v", seq)
	}

	// A second run appends without a second header.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := p.Run(ctx2); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, rundir.MempoolCSV.Name))
	if c := strings.Count(string(data), "time_ns"); c != 1 {
		t.Errorf("%d headers in mempool.csv", c)
	}
}

// TestDrainRecord: a drain is complete (txs in no block are lost) when the
// mempools emptied or the whole grace period passed; an interrupted drain
// that gave up earlier is not (they are pending).
func TestDrainRecord(t *testing.T) {
	left := map[string]int{"validator0": 3, "validator1": 0}
	for _, tc := range []struct {
		name            string
		dr              DrainResult
		grace, bound    time.Duration
		interrupted     bool
		complete, empty bool
		wantLeft        string
	}{
		{"emptied", DrainResult{Drained: true, Waited: 1200 * time.Millisecond}, 30 * time.Second, 30 * time.Second, false, true, true, ""},
		{"full grace", DrainResult{Waited: 30 * time.Second, Last: left}, 30 * time.Second, 30 * time.Second, false, true, false, "txs left: validator0=3"},
		// Drain measures Waited just before its deadline check.
		{"full grace, a hair short", DrainResult{Waited: 30*time.Second - time.Microsecond, Last: left}, 30 * time.Second, 30 * time.Second, false, true, false, "txs left: validator0=3"},
		{"interrupted, gave up", DrainResult{Waited: 15 * time.Second, Last: left, Unreachable: []string{"validator2"}}, 30 * time.Second, 15 * time.Second, true, false, false,
			"txs left: validator0=3; unreachable: validator2"},
		{"interrupted, emptied", DrainResult{Drained: true, Waited: 2 * time.Second}, 30 * time.Second, 15 * time.Second, true, true, true, ""},
		{"interrupted, grace shorter than bound", DrainResult{Waited: 5 * time.Second, Last: left}, 5 * time.Second, 5 * time.Second, true, true, false, "txs left: validator0=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.dr.Record(tc.grace, tc.bound, tc.interrupted)
			if r.Complete != tc.complete || r.Empty != tc.empty || r.Interrupted != tc.interrupted || r.Left != tc.wantLeft {
				t.Errorf("record = %+v", *r)
			}
			if r.WaitedSec != tc.dr.Waited.Round(time.Millisecond).Seconds() || r.BoundSec != tc.bound.Seconds() || r.GraceSec != tc.grace.Seconds() {
				t.Errorf("seconds: %+v", *r)
			}
		})
	}
}

// TestMempoolPollerRunning: a node that does not run yet is neither polled
// nor counted as a failed poll; once it runs, its rows come.
func TestMempoolPollerRunning(t *testing.T) {
	fa, a := newFake(t)
	var polls atomic.Int64
	fa.mempool = func() int { polls.Add(1); return 1 }
	fl, late := newFake(t)
	fl.mempool = func() int { return 2 }
	fl.fail.Store(true) // not started: it would not answer
	var running atomic.Bool
	dir := t.TempDir()
	p := NewMempoolPoller(dir, []Node{{Name: "a", URL: a.URL}, {Name: "late", URL: late.URL}}, 20*time.Millisecond)
	p.Running = func(n string) bool { return n != "late" || running.Load() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = p.Run(ctx) }()
	for polls.Load() < 5 {
		time.Sleep(10 * time.Millisecond)
	}
	if e := p.Errors(); e != 0 {
		t.Errorf("%d failed polls of a node that does not run", e)
	}
	joined := time.Now().Add(-20 * time.Millisecond).UnixNano() // a round begun just before
	fl.fail.Store(false)
	running.Store(true)
	for p.Peaks()["late"] == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	rows, _, err := rundir.MempoolCSV.ReadFile(filepath.Join(dir, rundir.MempoolCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Node == "late" && r.TimeNs < joined {
			t.Errorf("late polled before it ran: %+v", r)
		}
	}
}
