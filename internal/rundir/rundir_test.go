package rundir

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCreateConcurrent: 8 creations in the same second get 8 directories.
// (Checking for a free name and then creating it gave 7 for 8.)
func TestCreateConcurrent(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	const n = 8
	var wg sync.WaitGroup
	paths := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := Create(root, "quickstart", now)
			if err == nil {
				paths[i] = d.Path
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	seen := map[string]bool{}
	for i, p := range paths {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if seen[p] {
			t.Errorf("two creations got %s", p)
		}
		seen[p] = true
		for _, sub := range []string{Homes, Logs, Metrics} {
			if st, err := os.Stat(filepath.Join(p, sub)); err != nil || !st.IsDir() {
				t.Errorf("%s/%s: %v", p, sub, err)
			}
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != n {
		t.Errorf("%d directories for %d creations", len(entries), n)
	}
	if !seen[filepath.Join(root, "20261123-170000-quickstart")] || !seen[filepath.Join(root, "20261123-170000-quickstart-8")] {
		t.Errorf("names: %v", paths)
	}
}

// roundTrip writes rows with the codec's WriteFile and reads them back.
func roundTrip[T any](t *testing.T, c *CSV[T], rows []T) {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(c.Name))
	if err := c.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	got, truncated, err := c.ReadFile(path)
	if err != nil || truncated {
		t.Fatalf("%s: read: %v (truncated %v)", c.Name, err, truncated)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("%s round trip:\n got %+v\nwant %+v", c.Name, got, rows)
	}
}

func TestRoundTrips(t *testing.T) {
	roundTrip(t, SentCSV, []Sent{
		{Seq: 0, Conn: 0, Node: "validator0", Hash: "AB01", Intended: 1, SentAt: 2, Ack: 3, Result: ResultOK},
		{Seq: 1, Conn: 3, Node: "v1", Hash: "CD02", Intended: 10, SentAt: 12, Result: ResultSendError, Log: "write: broken pipe, \"quoted\"\nsecond line"},
		// v1.0.1's answer to a full mempool: a JSON-RPC error, negative.
		{Seq: 2, Conn: 1, Node: "v1", Hash: "EF03", Intended: 20, SentAt: 21, Ack: 25, Result: ResultRejected, Code: -32603, Log: "mempool is full"},
	})
	roundTrip(t, TxsCSV, []Tx{
		{Seq: 0, Node: "v0", Hash: "AB", IntendedNs: 1, SentNs: 2, State: StateCommitted, Height: 5, BlockTimeNs: 9,
			LatencyMs: 1.5, LatencyNextMs: 1001.25, HasLatency: true, HasNext: true},
		{Seq: 1, Node: "v0", Conn: 2, Hash: "CD", IntendedNs: 1, SentNs: 2, State: StateRejected, Code: -32603, Log: "Internal error"},
		{Seq: 2, Node: "v0", Hash: "EF", State: StateRejected, Code: 0, Log: "code 0 but rejected"},
		{Seq: 3, Node: "v0", Hash: "01", State: StatePending},
		{Seq: 4, Node: "v0", Hash: "02", State: StateLost},
	})
	roundTrip(t, BlocksCSV, []Block{{Height: 4, TimeNs: 5, NumTxs: 6, RunTxs: 5, SizeBytes: 700, Proposer: "2D47"}})
	roundTrip(t, BlockTxsCSV, []BlockTx{{Height: 4, Index: 1, Hash: "AB", Code: 4294967295, Log: "x,y"}})
	roundTrip(t, MempoolCSV, []MempoolSample{{TimeNs: 1, Node: "v0", Size: 7}})
	roundTrip(t, SamplesCSV, []Sample{{TimeNs: 1, Node: "v0", Metric: "m", Labels: `{a="b,c"}`, Value: 0.25}})
	roundTrip(t, ProcCSV, []Proc{{TimeNs: 1, Node: HarnessNode, PID: 7, RSSBytes: 1 << 20, CPUSeconds: 1.5}})
	roundTrip(t, HostCSV, []Host{{TimeNs: 1, Load1: 0.5, Load5: 1, Load15: 2, CPUBusySeconds: 3, CPUTotalSeconds: 4, CPUs: 2, CPUStealSeconds: 0.5, CPUIRQSeconds: 0.25}})
	roundTrip(t, MachinesCSV, []MachineLoad{
		{Machine: "m1", Host: Host{TimeNs: 1, Load1: 0.5, Load5: 1, Load15: 2, CPUBusySeconds: 3, CPUTotalSeconds: 4, CPUs: 2, CPUStealSeconds: 0.5, CPUIRQSeconds: 0.25}},
		{Machine: "m2", Host: Host{TimeNs: 1, Load1: 1.5, CPUBusySeconds: 7, CPUTotalSeconds: 9, CPUs: 8}},
	})
	roundTrip(t, ScrapeErrorsCSV, []ScrapeError{{TimeNs: 1, Node: "v0", Source: "metrics", Error: "dial: refused"}})
	roundTrip(t, PublishedCSV, []Published{
		{Seq: 0, MsgID: "m0", Publisher: "host3", Intended: 1, SentAt: 2, Ack: 3, Result: ResultOK},
		{Seq: 1, MsgID: "m1", Publisher: "host0", Intended: 5, SentAt: 9, Result: ResultSendError, Log: "connection refused"},
	})
	roundTrip(t, GossipTraceCSV, []GossipEvent{
		{TimeNs: 1, Node: "host1", Kind: GossipDeliver, MsgID: "m0", Peer: "host3", Size: 1000},
		{TimeNs: 2, Node: "host1", Kind: GossipDropRPC, Peer: "host2", Reason: "queue full"},
	})
	roundTrip(t, DeliveriesCSV, []Delivery{
		{MsgID: "m0", Publisher: "host3", Node: "host1", State: DeliveryDelivered, From: "host3", Hop: 1, PublishNs: 1, DeliverNs: 4, Duplicates: 2},
		{MsgID: "m0", Publisher: "host3", Node: "host9", State: DeliveryMissing, PublishNs: 1, Reason: "host_exited"},
	})
}

// TestDecodeErrors: bad input names the file, the line and the column; a
// cut last line (a run killed mid-write) is skipped and reported, anywhere
// else it is an error.
func TestDecodeErrors(t *testing.T) {
	head := strings.Join(SentCSV.Header, ",") + "\n"
	ok := "0,0,v0,AB,1,2,3,ok,0,\n"
	cases := []struct {
		name, data string
		rows       int
		truncated  bool
		err        string
	}{
		{"good", head + ok + ok, 2, false, ""},
		{"empty code is 0", head + "0,0,v0,AB,1,2,3,ok,,\n", 1, false, ""},
		{"cut last line", head + ok + "1,0,v0,AB,1,", 1, true, ""},
		{"cut quoted last field", head + ok + "1,0,v0,AB,1,2,3,send_error,0,\"broken", 1, true, ""},
		{"short line in the middle", head + "1,0,v0\n" + ok, 0, false, "sent.csv:2: 3 fields, want 10"},
		{"bad number", head + ok + "x,0,v0,AB,1,2,3,ok,0,\n", 1, false, `sent.csv:3: seq: "x" is not an unsigned integer`},
		{"bad result", head + "0,0,v0,AB,1,2,3,maybe,0,\n", 0, false, `sent.csv:2: result: "maybe": want ok`},
		{"missing column", "seq,conn,node\n", 0, false, "sent.csv:1: header \"seq,conn,node\" lacks column(s) hash"},
		{"no header", "", 0, false, "sent.csv: empty file (no header)"},
		{"columns reordered", "conn,seq,node,hash,intended_ns,sent_ns,ack_ns,result,code,log,extra\n3,7,v0,ab,1,2,3,ok,-5,,x\n", 1, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sent.csv")
			os.WriteFile(path, []byte(tc.data), 0o644)
			rows, truncated, err := SentCSV.ReadFile(path)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if len(rows) != tc.rows || truncated != tc.truncated {
				t.Errorf("rows %d truncated %v, want %d %v", len(rows), truncated, tc.rows, tc.truncated)
			}
			if tc.name == "columns reordered" && (rows[0].Seq != 7 || rows[0].Conn != 3 || rows[0].Code != -5 || rows[0].Hash != "AB") {
				t.Errorf("row = %+v", rows[0])
			}
		})
	}
}

// TestGzipCut: a samples file whose writer died between two flushes reads
// up to the last flush.
func TestGzipCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.csv.gz")
	w, err := SamplesCSV.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		w.Write(&Sample{TimeNs: int64(i), Node: "n", Metric: "m", Value: 1})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Write(&Sample{TimeNs: 100, Node: "n", Metric: "m", Value: 1})
	w.enc.Flush() // into gzip's buffer only: a crash before the next flush
	w.bw.Flush()
	w.f.Close()
	rows, truncated, err := SamplesCSV.ReadFile(path)
	if err != nil || !truncated || len(rows) != 100 || rows[99].TimeNs != 99 {
		t.Errorf("rows %d truncated %v err %v, want 100 rows of a cut file", len(rows), truncated, err)
	}
	// Whole: read to the end, not truncated.
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	e := SamplesCSV.NewEncoder(gz)
	e.Encode(&Sample{TimeNs: 1, Node: "n", Metric: "m", Value: 2})
	e.Flush()
	gz.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)
	if rows, truncated, err := SamplesCSV.ReadFile(path); err != nil || truncated || len(rows) != 1 {
		t.Errorf("whole file: %d rows truncated %v err %v", len(rows), truncated, err)
	}
}

// TestWriterFlushes: records reach the file on the periodic flush, before
// Close (what an interrupted run leaves).
func TestWriterFlushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.csv")
	w, err := SentCSV.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.StartFlushing(50 * time.Millisecond)
	w.Write(&Sent{Seq: 1, Hash: "AB", Result: ResultOK})
	deadline := time.Now().Add(2 * time.Second)
	for {
		rows, _, err := SentCSV.ReadFile(path)
		if err == nil && len(rows) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not flushed: %d rows, %v", len(rows), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Append keeps the header once.
	a, err := SentCSV.Append(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write(&Sent{Seq: 2, Hash: "CD", Result: ResultOK})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := SentCSV.ReadFile(path); err != nil || len(rows) != 2 {
		t.Errorf("after append: %d rows, %v", len(rows), err)
	}
}

func TestResultsSchema(t *testing.T) {
	data, err := EncodeResults(&Results{RunID: "r", Accounting: Accounting{Sent: 3, Committed: 1, Lost: 1, Pending: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"schema_version": "`+ResultsSchema+`"`)) {
		t.Errorf("no schema_version in %s", data)
	}
	r, err := DecodeResults(data)
	if err != nil || r.Accounting.Pending != 1 || !r.Accounting.Holds() {
		t.Errorf("decode: %+v, %v", r, err)
	}
	for _, tc := range []struct{ json, err string }{
		{`{"run_id": "old"}`, ""},         // before schema_version
		{`{"schema_version": "1.7"}`, ""}, // a newer minor: only added fields
		{`{"schema_version": "0.9"}`, ""}, // older major
		{`{"schema_version": "3.0"}`, "newer than this benchnet reads (2.x)"},
		{`{"schema_version": "two"}`, `schema_version "two": want MAJOR.MINOR`},
	} {
		_, err := DecodeResults([]byte(tc.json))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: err = %v, want %q", tc.json, err, tc.err)
		}
	}
}

// TestResultsBlockStats: schema 2 writes Initia's per-block block_stats
// and the summary as block_summary; a 1.x file's block_stats (the summary)
// still reads as the summary.
func TestResultsBlockStats(t *testing.T) {
	in := &Results{Blocks: []BlockEntry{{Height: 5, TxCount: 312, Time: "2026-11-24T12:00:00Z"}},
		BlockStats: BlockStats{Blocks: 1, FirstHeight: 5}}
	data, err := EncodeResults(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"block_stats": [`)) || !bytes.Contains(data, []byte(`"tx_count": 312`)) ||
		!bytes.Contains(data, []byte(`"block_summary": {`)) {
		t.Errorf("encoded:\n%s", data)
	}
	r, err := DecodeResults(data)
	if err != nil || len(r.Blocks) != 1 || r.Blocks[0].Height != 5 || r.BlockStats.FirstHeight != 5 {
		t.Errorf("round trip: %+v, %v", r, err)
	}
	for _, v := range []string{`"schema_version": "1.0", `, ``} {
		old := `{` + v + `"run_id": "x", "block_stats": {"first_height": 7, "blocks": 3}}`
		r, err := DecodeResults([]byte(old))
		if err != nil || r.BlockStats.FirstHeight != 7 || r.BlockStats.Blocks != 3 || r.Blocks != nil || r.RunID != "x" {
			t.Errorf("1.x file %s: %+v, %v", old, r, err)
		}
	}
}

// TestHostCSVWithoutSteal: a host.csv written before cpu_steal_seconds
// existed still reads, its steal 0; a file lacking a required column does not.
func TestHostCSVWithoutSteal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "host.csv")
	old := "time_ns,load1,load5,load15,cpu_busy_seconds,cpu_total_seconds,cpus\n1,0.5,1,2,3,4,2\n"
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, err := HostCSV.ReadFile(p)
	if err != nil || len(rows) != 1 {
		t.Fatalf("read old host.csv: %v %+v", err, rows)
	}
	if want := (Host{TimeNs: 1, Load1: 0.5, Load5: 1, Load15: 2, CPUBusySeconds: 3, CPUTotalSeconds: 4, CPUs: 2}); rows[0] != want {
		t.Errorf("old host.csv = %+v, want %+v", rows[0], want)
	}
	if err := os.WriteFile(p, []byte("time_ns,load1,load5,load15,cpu_busy_seconds,cpus\n1,0.5,1,2,3,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := HostCSV.ReadFile(p); err == nil || !strings.Contains(err.Error(), "cpu_total_seconds") {
		t.Errorf("host.csv without cpu_total_seconds: err %v, want the missing column named", err)
	}
}
