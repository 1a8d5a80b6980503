package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func latenessLines() []LinkemLatenessSample {
	return []LinkemLatenessSample{
		{Time: time.Unix(1000, 0).UTC(), Counts: []uint64{}},
		{Time: time.Unix(1001, 5).UTC(), Frames: 3, SumNs: 4500, MaxNs: 2000, MinDelayNs: 10e6, Sched: "SCHED_FIFO 1", Counts: []uint64{1, 0, 2}},
		{Time: time.Unix(1002, 0).UTC(), Frames: 4, SumNs: 9000, MaxNs: 4500, MinDelayNs: 10e6, Sched: "SCHED_OTHER nice -10", Counts: make([]uint64, LinkemLatenessBuckets)},
	}
}

// TestLatenessSeriesRoundTrip: what the switch appends reads back the same,
// through the file writer and ReadFile.
func TestLatenessSeriesRoundTrip(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	os.Mkdir(d.Join(LinkemDir), 0o755)
	path := LinkemLatenessSeries.Path(d)
	want := latenessLines()
	for _, part := range [][]LinkemLatenessSample{want[:1], want[1:]} { // reopened: appends
		w, err := LinkemLatenessSeries.Append(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range part {
			if err := w.Write(&part[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got, truncated, err := LinkemLatenessSeries.ReadFile(path)
	if err != nil || truncated {
		t.Fatalf("read: %v, truncated %v", err, truncated)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}
	// The file format is the one runs already wrote (keys and layout).
	data, _ := os.ReadFile(path)
	if line := strings.SplitN(string(data), "\n", 3)[1]; line != `{"t":"1970-01-01T00:16:41.000000005Z","frames":3,"sum_ns":4500,"max_ns":2000,"min_delay_ns":10000000,"sched":"SCHED_FIFO 1","counts":[1,0,2]}` {
		t.Errorf("line 2 = %s", line)
	}
}

// TestLatenessSeriesCut: a line cut by a crash ends the file (reported);
// a bad line elsewhere, or a whole last line that fails the check, is an
// error naming the line.
func TestLatenessSeriesCut(t *testing.T) {
	var b bytes.Buffer
	enc := LinkemLatenessSeries.NewEncoder(&b)
	lines := latenessLines()
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			t.Fatal(err)
		}
	}
	full := b.String()
	tooMany := `{"counts":[` + strings.Repeat("0,", LinkemLatenessBuckets) + "0]}"
	for _, tc := range []struct {
		name, in  string
		n         int
		truncated bool
		err       string
	}{
		{"whole", full, 3, false, ""},
		{"blank lines", "\n" + strings.ReplaceAll(full, "\n", "\n\n"), 3, false, ""},
		{"cut in a string", full + `{"t":"2026-`, 3, true, ""},
		{"cut in the counts", full + full[:len(full)-5], 5, true, ""},
		{"no newline after a whole last line", full[:len(full)-1], 3, false, ""},
		{"bad middle line", strings.Replace(full, "\n", "\nnot json\n", 1), 1, false, "linkem/lateness.jsonl:2:"},
		{"cut middle line", strings.Replace(full, "\n", "\n{\"t\":\n", 1), 1, false, "linkem/lateness.jsonl:2:"},
		{"too many buckets, last line", full + tooMany, 3, false, "linkem/lateness.jsonl:4: 99 buckets, at most 98"},
		{"too many buckets", tooMany + "\n" + full, 0, false, "lateness.jsonl:1: 99 buckets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), LinkemLatenessSeries.Name)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(tc.in), 0o644)
			got, truncated, err := LinkemLatenessSeries.ReadFile(path)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if len(got) != tc.n || truncated != tc.truncated {
				t.Errorf("%d lines truncated %v, want %d %v", len(got), truncated, tc.n, tc.truncated)
			}
		})
	}
}

func countersRecord() *LinkemCounters {
	return &LinkemCounters{
		Ports: []LinkemPortCounters{
			{Port: "validator0", SentPackets: 7, SentBytes: 900, ForwardedPackets: 14, ForwardedBytes: 1800, DroppedLoss: 1, DroppedQueue: 2, ReceivedPackets: 5, ReceivedBytes: 600, ReadErrors: 3, WriteErrors: 4},
			{Port: `odd "name"`, SentPackets: 1},
		},
		Lateness: &LinkemLatenessHist{
			Buckets:    []LinkemBucket{{LE: 1.024e-06, Count: 1}, {LE: 2.048e-06, Count: 1}, {LE: 0.002097152, Count: 5}},
			SumSeconds: 30.0020835, Count: 6, MaxSeconds: 30,
		},
	}
}

// TestLinkemCountersRoundTrip: counters.prom decodes to what was encoded,
// through the run directory's file, and keeps the text the switch wrote.
func TestLinkemCountersRoundTrip(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	os.Mkdir(d.Join(LinkemDir), 0o755)
	want := countersRecord()
	if err := WriteLinkemCounters(d.Join(LinkemDir, LinkemCountersFile), want); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadLinkemCounters()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v %+v\nwant %+v %+v", got, got.Lateness, want, want.Lateness)
	}
	data, _ := os.ReadFile(d.Join(LinkemDir, LinkemCountersFile))
	for _, line := range []string{
		`benchnet_linkem_sent_packets_total{port="validator0"} 7`,
		`benchnet_linkem_write_errors_total{port="odd \"name\""} 0`,
		`benchnet_linkem_lateness_seconds_bucket{le="0.002097152"} 5`,
		`benchnet_linkem_lateness_seconds_bucket{le="+Inf"} 6`,
		`benchnet_linkem_lateness_seconds_sum 30.0020835`,
		`benchnet_linkem_lateness_max_seconds 30`,
	} {
		if !strings.Contains(string(data), line+"\n") {
			t.Errorf("counters.prom lacks %s:\n%s", line, data)
		}
	}
	if st, _ := os.Stat(d.Join(LinkemDir, LinkemCountersFile)); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	lines := got.CounterLines()
	if len(lines) != 20 || lines[0] != `benchnet_linkem_sent_packets_total{port="validator0"} 7` {
		t.Errorf("counter lines: %q", lines)
	}
}

// TestLinkemCountersDecode: files from before the histogram, other
// families and comments are read; broken samples are errors naming the line.
func TestLinkemCountersDecode(t *testing.T) {
	old := "# HELP benchnet_linkem_sent_packets_total x\n# TYPE benchnet_linkem_sent_packets_total counter\n" +
		"benchnet_linkem_sent_packets_total{port=\"v0\"} 3\n\nbenchnet_linkem_received_packets_total{port=\"v1\"} 4\n" +
		"benchnet_linkem_received_packets_total{port=\"v0\"} 5\nsome_other_family{x=\"y\"} 1.5\n"
	c, err := DecodeLinkemCounters(strings.NewReader(old), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkemPortCounters{{Port: "v0", SentPackets: 3, ReceivedPackets: 5}, {Port: "v1", ReceivedPackets: 4}}
	if !reflect.DeepEqual(c.Ports, want) || c.Lateness != nil {
		t.Errorf("got %+v, lateness %+v", c.Ports, c.Lateness)
	}
	for _, tc := range []struct{ in, err string }{
		{"benchnet_linkem_sent_packets_total{port=\"v0\"} x\n", "counters.prom:1: benchnet_linkem_sent_packets_total: bad value"},
		{"# ok\nbenchnet_linkem_sent_packets_total{node=\"v0\"} 1\n", "counters.prom:2: benchnet_linkem_sent_packets_total: bad port label"},
		{"benchnet_linkem_lateness_seconds_bucket{le=\"x\"} 1\n", "bad le label"},
		{"benchnet_linkem_lateness_seconds_sum\n", "counters.prom:1: benchnet_linkem_lateness_seconds_sum: bad value"},
		{"benchnet_linkem_sent_packets_total{port=\"v0\" 1\n", "counters.prom:1: benchnet_linkem_sent_packets_total: malformed labels"},
		{"benchnet_linkem_sent_packets_total{port=\"v0\"} 1.5\n", "counters.prom:1: benchnet_linkem_sent_packets_total: bad value"},
		{"# c\nbenchnet_linkem_sent_packets_total{port=\"v0\"} -1\n", "counters.prom:2: benchnet_linkem_sent_packets_total: bad value"},
	} {
		if _, err := DecodeLinkemCounters(strings.NewReader(tc.in), ""); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
		}
	}
}

// TestFaultsRoundTrip: faults.json reads back what the analysis wrote,
// with the keys runs already have.
func TestFaultsRoundTrip(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	want := &FaultResults{
		Perturbations: []Perturbation{{Entry: 1, Action: "kill", Nodes: []string{"validator2"}, StartNs: 5, EndNs: 9, Undone: true,
			BlockRate: 1.5, Blocks: 3, Missed: 2, FirstBlockS: 0.4, LongestGapS: 1.2, BackAtTip: map[string]float64{"validator2": 3.5},
			Txs: map[string]int{"committed": 40, "lost": 1}}},
		Cycles: []Cycle{{RotateCycle: RotateCycle{Cycle: 1, Node: "e0", StartNs: 2, CaughtUpNs: 6, Height: 20, Tip: 21, StopNs: 9},
			CatchUpS: 4, BlocksPerS: 5, Duplicates: 1}},
		Halted: "no block for 30 s",
	}
	if err := d.WriteFaults(want); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadFaults()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}
	data, _ := os.ReadFile(d.Join(FaultsFile))
	for _, key := range []string{`"perturbations"`, `"back_at_tip_s"`, `"longest_gap_s"`, `"cycles"`, `"caught_up_ns"`, `"catch_up_s"`, `"halted"`} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("faults.json lacks %s", key)
		}
	}
}

// TestLinkLatenessRoundTrip: linkem/lateness.json.
func TestLinkLatenessRoundTrip(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	os.Mkdir(d.Join(LinkemDir), 0o755)
	want := &LinkLateness{From: time.Unix(1, 0).UTC(), To: time.Unix(9, 0).UTC(), Window: "load_start to drained", Frames: 7,
		MeanMs: 0.1, P50Ms: 0.05, P99Ms: 0.2, MaxMs: 1, SmallestDelayMs: 10, BoundMs: 1, Met: true, Sched: "SCHED_FIFO 1", Verdict: "on time"}
	if err := d.WriteLinkLateness(want); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadLinkLateness()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
}
