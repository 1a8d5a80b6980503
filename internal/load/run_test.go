package load

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeNode is an in-process CometBFT JSON-RPC endpoint: POST / and
// /websocket, broadcast_tx_async and broadcast_tx_sync.
type fakeNode struct {
	closeEvery int  // websocket: drop the connection on every n-th message, unanswered
	rejectOdd  bool // sync: CheckTx code 5 for txs with an odd seq

	mu     sync.Mutex
	wrote  map[string]int64 // websocket answer id -> when its write returned (nil: not kept)
	hashes map[string]int
	ids    map[string]int
	msgs   int
	srv    *httptest.Server
}

func newFakeNode(t testing.TB, fn *fakeNode) *fakeNode {
	fn.hashes, fn.ids = map[string]int{}, map[string]int{}
	fn.srv = httptest.NewServer(fn)
	t.Cleanup(fn.srv.Close)
	return fn
}

type rpcReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Tx string `json:"tx"`
	} `json:"params"`
}

// handle returns the response, or nil to drop the connection.
func (f *fakeNode) handle(data []byte, ws bool) []byte {
	var req rpcReq
	if err := json.Unmarshal(data, &req); err != nil {
		return []byte(`{"jsonrpc":"2.0","id":-1,"error":{"code":-32700,"message":"parse error"}}`)
	}
	tx, err := base64.StdEncoding.DecodeString(req.Params.Tx)
	f.mu.Lock()
	f.msgs++
	n := f.msgs
	f.hashes[TxHash(tx)]++
	f.ids[string(req.ID)]++
	f.mu.Unlock()
	if ws && f.closeEvery > 0 && n%f.closeEvery == 0 {
		return nil
	}
	if err != nil {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad tx"}}`, req.ID)
	}
	code, log := 0, ""
	if p, err := Decode(tx); req.Method == "broadcast_tx_sync" && f.rejectOdd && err == nil && p.Seq%2 == 1 {
		code, log = 5, "odd, sorry"
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"code":%d,"data":"","log":%q,"codespace":"","hash":"%s"}}`,
		req.ID, code, log, TxHash(tx))
}

var upgrader = websocket.Upgrader{}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/websocket" {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			resp := f.handle(msg, true)
			if resp == nil {
				return
			}
			if err := c.WriteMessage(websocket.TextMessage, resp); err != nil {
				return
			}
			if f.wrote != nil {
				var id struct{ ID json.RawMessage }
				_ = json.Unmarshal(resp, &id)
				f.mu.Lock()
				f.wrote[string(id.ID)] = time.Now().UnixNano()
				f.mu.Unlock()
			}
		}
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write(f.handle(body, false))
}

type memSink struct {
	mu   sync.Mutex
	recs []rundir.Sent
}

func (m *memSink) Sent(s rundir.Sent) error {
	m.mu.Lock()
	m.recs = append(m.recs, s)
	m.mu.Unlock()
	return nil
}

// checkRecords asserts one record per seq 0..n-1, nothing more.
func checkRecords(t *testing.T, recs []rundir.Sent, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d records, want exactly %d", len(recs), n)
	}
	seen := make([]bool, n)
	for _, r := range recs {
		if r.Seq >= uint64(n) || seen[r.Seq] {
			t.Fatalf("seq %d out of range or duplicated", r.Seq)
		}
		seen[r.Seq] = true
		if r.SentAt < r.Intended {
			t.Fatalf("seq %d sent %v before its intended time", r.Seq, time.Duration(r.Intended-r.SentAt))
		}
		if len(r.Hash) != 64 || strings.ToUpper(r.Hash) != r.Hash {
			t.Fatalf("seq %d: hash %q is not uppercase hex SHA-256", r.Seq, r.Hash)
		}
	}
}

func TestRunTransports(t *testing.T) {
	for _, tc := range []struct {
		transport, method string
	}{
		{"websocket", "async"},
		{"websocket", "sync"},
		{"http", "async"},
		{"http", "sync"},
	} {
		t.Run(tc.transport+"/"+tc.method, func(t *testing.T) {
			fn := newFakeNode(t, &fakeNode{rejectOdd: true})
			targets := []Target{{Node: "v0", RPCURL: fn.srv.URL}, {Node: "v1", RPCURL: fn.srv.URL}}
			cfg := Config{RunID: "t", Rate: 500, Connections: 3, Count: 601, Size: 128,
				Transport: tc.transport, Method: tc.method, Format: "kv"}
			sink := &memSink{}
			sum, err := Run(context.Background(), cfg, targets, sink)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, sink.recs, 601)
			// The answers came over raw sockets, which the race detector
			// does not see as synchronisation: read the node under its lock.
			fn.mu.Lock()
			defer fn.mu.Unlock()
			if len(fn.hashes) != 601 || fn.msgs != 601 || len(fn.ids) != 601 {
				t.Fatalf("server got %d messages, %d distinct txs, %d distinct ids; want 601 each", fn.msgs, len(fn.hashes), len(fn.ids))
			}
			nodes := map[string]int{}
			wantRejected := 0
			for _, r := range sink.recs {
				if fn.hashes[r.Hash] != 1 {
					t.Fatalf("seq %d: hash %s not received exactly once", r.Seq, r.Hash)
				}
				nodes[r.Node]++
				want, code, log := rundir.ResultOK, int64(0), ""
				if tc.method == "sync" && r.Seq%2 == 1 {
					want, code, log = rundir.ResultRejected, 5, "odd, sorry"
					wantRejected++
				}
				if r.Result != want || r.Code != code || r.Log != log || r.Ack < r.SentAt {
					t.Fatalf("seq %d: %+v, want result %s code %d log %q", r.Seq, r, want, code, log)
				}
			}
			// round-robin: 3 connections over 2 nodes = conns 0,2 on v0 and 1 on v1.
			if nodes["v0"] != 401 || nodes["v1"] != 200 {
				t.Fatalf("per node %v, want v0 401 (conns 0, 2), v1 200 (conn 1)", nodes)
			}
			if sum.Expected != 601 || sum.Attempted != 601 || sum.Sent != 601 || sum.Rejected != wantRejected || sum.SendErrors != 0 {
				t.Fatalf("summary %+v", sum)
			}
			// Validity (send lag within bounds) is a measurement of this
			// machine's load, not of the transport: bench/load measures it.
			if !sum.Valid {
				t.Logf("run invalid on this machine: %v", sum.Invalid)
			}
		})
	}
}

// A node that drops the websocket turns the unanswered and the
// while-disconnected txs into send_error rows; none disappears from sent.csv.
func TestRunConnectionDrops(t *testing.T) {
	fn := newFakeNode(t, &fakeNode{closeEvery: 97})
	path := filepath.Join(t.TempDir(), "sent.csv")
	w, err := NewSentWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{RunID: "drops", Rate: 1000, Connections: 2, Count: 1500, Size: 64, Format: "kv"}
	sum, err := Run(context.Background(), cfg, []Target{{Node: "v0", RPCURL: fn.srv.URL}}, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := readSent(path)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs, 1500)
	fn.mu.Lock() // see TestRunTransports
	defer fn.mu.Unlock()
	errs, ok := 0, 0
	for _, r := range recs {
		switch r.Result {
		case rundir.ResultSendError:
			errs++
			if r.Log == "" || r.Ack != 0 {
				t.Fatalf("send_error row without a log or with an ack: %+v", r)
			}
		case rundir.ResultOK:
			ok++
			if fn.hashes[r.Hash] != 1 {
				t.Fatalf("ok row %d never reached the server", r.Seq)
			}
		default:
			t.Fatalf("unexpected row %+v", r)
		}
	}
	drops := fn.msgs / 97
	if errs < drops || errs != sum.SendErrors || ok != sum.OK || ok+errs != 1500 {
		t.Fatalf("%d ok + %d send_error rows (summary %d/%d), server dropped %d times", ok, errs, sum.OK, sum.SendErrors, drops)
	}
	t.Logf("%d ok, %d send_error, %d drops", ok, errs, drops)
}

// A node that moves (a restarted swarm task, published on new ports) keeps
// its share of the load: every reconnect, and every HTTP request, reads the
// target's URL anew. The first node drops the websocket at its 200th
// message, by which time the URL names the second.
func TestRunTargetMoves(t *testing.T) {
	for _, transport := range []string{"websocket", "http"} {
		t.Run(transport, func(t *testing.T) {
			const moveAt = 200
			old := newFakeNode(t, &fakeNode{closeEvery: moveAt})
			moved := newFakeNode(t, &fakeNode{})
			url := func() string {
				old.mu.Lock()
				defer old.mu.Unlock()
				if old.msgs >= moveAt {
					return moved.srv.URL
				}
				return old.srv.URL
			}
			cfg := Config{RunID: "moves", Rate: 500, Connections: 1, Count: 1000, Size: 64, Transport: transport, Format: "kv"}
			sink := &memSink{}
			sum, err := Run(context.Background(), cfg, []Target{{Node: "v0", RPCURL: old.srv.URL, URL: url}}, sink)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, sink.recs, 1000)
			old.mu.Lock()
			moved.mu.Lock()
			defer old.mu.Unlock()
			defer moved.mu.Unlock()
			// HTTP has up to InFlight (16) requests in flight when the URL changes.
			if old.msgs < moveAt || old.msgs > moveAt+16 || moved.msgs < 1000-moveAt-16-sum.SendErrors {
				t.Fatalf("old node got %d messages, the moved one %d, %d send errors: the load did not follow the node", old.msgs, moved.msgs, sum.SendErrors)
			}
			for _, r := range sink.recs {
				if r.Result == rundir.ResultOK && old.hashes[r.Hash]+moved.hashes[r.Hash] != 1 {
					t.Fatalf("ok row %d reached %d nodes", r.Seq, old.hashes[r.Hash]+moved.hashes[r.Hash])
				}
			}
			t.Logf("old %d, moved %d, send errors %d", old.msgs, moved.msgs, sum.SendErrors)
		})
	}
}

func TestRunRefused(t *testing.T) {
	for _, tr := range []string{"websocket", "http"} {
		t.Run(tr, func(t *testing.T) {
			cfg := Config{RunID: "x", Rate: 1000, Connections: 1, Count: 50, Size: 64, Transport: tr}
			sink := &memSink{}
			sum, err := Run(context.Background(), cfg, []Target{{Node: "gone", RPCURL: "http://127.0.0.1:1"}}, sink)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, sink.recs, 50)
			for _, r := range sink.recs {
				if r.Result != rundir.ResultSendError || !strings.Contains(r.Log, "refused") && !strings.Contains(r.Log, "not connected") {
					t.Fatalf("row %+v, want send_error naming the failure", r)
				}
			}
			if sum.SendErrors != 50 || sum.Sent != 0 || sum.Valid {
				t.Fatalf("summary %+v: want 50 send errors and invalid", sum)
			}
		})
	}
}

func TestPlanLayout(t *testing.T) {
	targets := []Target{{Node: "a", RPCURL: "u"}, {Node: "b", RPCURL: "u"}, {Node: "c", RPCURL: "u"}}
	for _, tc := range []struct {
		target string
		count  int
		nodes  []string
		counts []int
	}{
		{"single", 0, []string{"a", "a"}, []int{300, 300}},
		{"round-robin", 0, []string{"a", "b"}, []int{300, 300}},
		{"all", 0, []string{"a", "a", "b", "b", "c", "c"}, []int{300, 300, 300, 300, 300, 300}},
		{"all", 1000, []string{"a", "a", "b", "b", "c", "c"}, []int{167, 167, 167, 167, 166, 166}},
	} {
		t.Run(fmt.Sprint(tc.target, tc.count), func(t *testing.T) {
			cfg := Config{Rate: 100, Connections: 2, Duration: 3 * time.Second, Count: tc.count, Size: 64, Target: tc.target}
			cfg.setDefaults()
			plans, err := cfg.plan(targets)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			var counts []int
			var seq uint64
			for _, p := range plans {
				nodes, counts = append(nodes, p.target.Node), append(counts, p.n)
				if p.seq0 != seq {
					t.Fatalf("conn %d starts at seq %d, want %d", p.idx, p.seq0, seq)
				}
				seq += uint64(p.n)
			}
			if !reflect.DeepEqual(nodes, tc.nodes) || !reflect.DeepEqual(counts, tc.counts) {
				t.Fatalf("nodes %v counts %v, want %v %v", nodes, counts, tc.nodes, tc.counts)
			}
		})
	}
}

func TestSentRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.csv")
	w, err := NewSentWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	in := []rundir.Sent{
		{Seq: 0, Conn: 0, Node: "validator-0", Hash: TxHash([]byte("a=b")), Intended: 1, SentAt: 2, Ack: 3, Result: rundir.ResultOK},
		{Seq: 1, Conn: 3, Node: "v1", Hash: TxHash([]byte("c=d")), Intended: 10, SentAt: 12, Result: rundir.ResultSendError, Log: "write: broken pipe, \"quoted\"\nsecond line"},
		{Seq: 2, Conn: 1, Node: "v1", Hash: TxHash([]byte("e")), Intended: 20, SentAt: 21, Ack: 25, Result: rundir.ResultRejected, Code: -32603, Log: "mempool is full"},
	}
	for _, s := range in {
		if err := w.Sent(s); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the periodic flush, before Close
	mid, err := readSent(path)
	if err != nil || len(mid) != len(in) {
		t.Fatalf("before Close: %d rows, %v; want %d rows flushed within a second", len(mid), err, len(in))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := readSent(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestBroadcast(t *testing.T) {
	fn := newFakeNode(t, &fakeNode{rejectOdd: true})
	c, _ := NewCodec(Config{RunID: "w", Size: 64})
	code, log, err := Broadcast(context.Background(), fn.srv.URL, "sync", c.Encode(3, time.Now()))
	if err != nil || code != 5 || log != "odd, sorry" {
		t.Fatalf("Broadcast = %d, %q, %v; want code 5", code, log, err)
	}
	code, _, err = Broadcast(context.Background(), fn.srv.URL, "async", c.Encode(4, time.Now()))
	if err != nil || code != 0 {
		t.Fatalf("Broadcast async = %d, %v", code, err)
	}
	if _, _, err := Broadcast(context.Background(), "http://127.0.0.1:1", "sync", []byte("a=b")); err == nil {
		t.Fatal("Broadcast to a closed port succeeded")
	}
}

func TestProgressAndDuration(t *testing.T) {
	fn := newFakeNode(t, &fakeNode{})
	cfg := Config{RunID: "p", Rate: 200, Connections: 2, Duration: 500 * time.Millisecond, Size: 64, Target: "all"}
	targets := []Target{{Node: "v0", RPCURL: fn.srv.URL}, {Node: "v1", RPCURL: fn.srv.URL}}
	r, err := NewRunner(cfg, targets, &memSink{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Expected() != 400 { // 2 targets × 2 conns × 200 tx/s × 0.5 s
		t.Fatalf("expected %d, want 400", r.Expected())
	}
	done := make(chan rundir.LoadSummary)
	go func() { s, _ := r.Run(context.Background()); done <- s }()
	var mid Progress
	time.Sleep(250 * time.Millisecond)
	mid = r.Progress()
	s := <-done
	if mid.Attempted < 100 || mid.Attempted > 300 || len(mid.Conns) != 4 {
		t.Fatalf("mid-run progress %+v, want about 200 of 400 over 4 connections", mid)
	}
	end := r.Progress()
	if end.Done != 400 || end.Attempted != 400 || s.Attempted != 400 {
		t.Fatalf("final progress %+v summary %+v", end, s)
	}
	for _, c := range s.Conns {
		if c.TargetRate != 200 || c.Achieved < 190 || c.Achieved > 210 {
			t.Fatalf("conn %d: target %.1f achieved %.1f", c.Conn, c.TargetRate, c.Achieved)
		}
	}
}

func TestRunCancel(t *testing.T) {
	fn := newFakeNode(t, &fakeNode{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	sink := &memSink{}
	sum, err := Run(ctx, Config{RunID: "c", Rate: 100, Connections: 1, Count: 1000, Size: 64}, []Target{{Node: "v0", RPCURL: fn.srv.URL}}, sink)
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if len(sink.recs) != sum.Attempted || sum.Attempted < 10 || sum.Attempted > 30 || sum.Valid {
		t.Fatalf("cancelled run: %d records, summary %+v", len(sink.recs), sum)
	}
}

func readSent(path string) ([]rundir.Sent, error) {
	rows, _, err := rundir.SentCSV.ReadFile(path)
	return rows, err
}

// BenchmarkRunTransports is the measurement TestRunTransports used to
// assert: 601 txs at 500 tx/s over 3 connections to an in-process node, per
// transport and method; it reports the worst connection's send lag p99 and
// achieved/target rate (the validity figures: ≤ 100 ms, ≥ 95 %) and how many
// runs were invalid. go test ./internal/load -run '^$' -bench RunTransports
func BenchmarkRunTransports(b *testing.B) {
	for _, tc := range []struct{ transport, method string }{
		{"websocket", "async"}, {"websocket", "sync"}, {"http", "async"}, {"http", "sync"},
	} {
		b.Run(tc.transport+"/"+tc.method, func(b *testing.B) {
			var lag, ratio, invalid float64
			ratio = math.Inf(1)
			for range b.N {
				fn := newFakeNode(b, &fakeNode{rejectOdd: true})
				cfg := Config{RunID: "b", Rate: 500, Connections: 3, Count: 601, Size: 128,
					Transport: tc.transport, Method: tc.method, Format: "kv"}
				sum, err := Run(context.Background(), cfg, []Target{{Node: "v0", RPCURL: fn.srv.URL}, {Node: "v1", RPCURL: fn.srv.URL}}, &memSink{})
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range sum.Conns {
					lag = math.Max(lag, c.LagP99Ms)
					if c.TargetRate > 0 {
						ratio = math.Min(ratio, c.Achieved/c.TargetRate)
					}
				}
				if !sum.Valid {
					invalid++
				}
			}
			b.ReportMetric(lag, "worst-lag-p99-ms")
			b.ReportMetric(100*ratio, "worst-achieved-%")
			b.ReportMetric(invalid, "invalid-runs")
		})
	}
}
