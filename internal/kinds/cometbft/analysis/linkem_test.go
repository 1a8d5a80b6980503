package analysis

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The userspace switch's record decides latency_valid; the accounting and
// the run's validity do not change.
func TestAnalyzeLinkemLateness(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []rundir.Event{
		{Time: sec(0), Kind: rundir.EventLinkem, Detail: "userspace"},
		{Time: sec(10), Kind: rundir.EventLoadStart},
		{Time: sec(20), Kind: rundir.EventLoadDone},
		{Time: sec(22), Kind: rundir.EventDrained},
	}
	fast := func(n int) map[time.Duration]uint64 {
		return map[time.Duration]uint64{60 * time.Microsecond: uint64(n)}
	}
	for _, tc := range []struct {
		name    string
		lines   []line
		valid   *bool
		p99Ms   float64 // within a bucket
		summary []string
	}{
		{
			name: "on time",
			lines: []line{
				{sec(0), 0, nil, 0},
				{sec(10), 40 * time.Millisecond, fast(100), 70_000},
				{sec(23), 40 * time.Millisecond, fast(10_100), 90_000},
			},
			valid: ptr(true), p99Ms: 0.06,
			summary: []string{"latency valid  yes", "link emulator lateness p99 0.06", "bound 1.000 ms"},
		},
		{
			// Before the load the switch was very late (start-up); only the
			// load's window counts. In it 3 % of the frames are 8 ms late.
			name: "late during the load",
			lines: []line{
				{sec(0), 0, nil, 0},
				{sec(9), 40 * time.Millisecond, map[time.Duration]uint64{time.Second: 50}, int64(time.Second)},
				{sec(15), 40 * time.Millisecond, map[time.Duration]uint64{time.Second: 50, 60 * time.Microsecond: 970, 8 * time.Millisecond: 30}, int64(9 * time.Millisecond)},
				{sec(23), 40 * time.Millisecond, map[time.Duration]uint64{time.Second: 50, 60 * time.Microsecond: 970, 8 * time.Millisecond: 30}, 0},
				{sec(40), 40 * time.Millisecond, map[time.Duration]uint64{time.Second: 5000}, int64(time.Second)}, // teardown
			},
			valid: ptr(false), p99Ms: 8,
			summary: []string{"latency valid  NO", "latency invalid: link emulator LATE: p50 0.0", "max 9.000 ms over 1000 delayed frames"},
		},
		{name: "no record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCase(t, filepath.Join("testdata", "all_committed"))
			writeEvents(t, dir, events)
			if tc.lines != nil {
				writeSeries(t, dir, tc.lines)
			}
			res, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid || res.Accounting.Committed != 4 {
				t.Errorf("valid %v committed %d: the link check must not touch them", res.Valid, res.Accounting.Committed)
			}
			raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			if tc.valid == nil {
				if res.LatencyValid != nil || bytes.Contains(raw, []byte("latency_valid")) || !res.LatencyOK() {
					t.Errorf("no record, yet latency_valid is set: %s", raw)
				}
				return
			}
			if res.LatencyValid == nil || *res.LatencyValid != *tc.valid || res.LatencyOK() != *tc.valid {
				t.Fatalf("latency_valid = %v, want %v (%s)", res.LatencyValid, *tc.valid, res.LatencyInvalid)
			}
			if want := `"latency_valid": ` + map[bool]string{true: "true", false: "false"}[*tc.valid]; !bytes.Contains(raw, []byte(want)) {
				t.Errorf("results.json lacks %s", want)
			}
			if (res.LatencyInvalid != "") == *tc.valid {
				t.Errorf("latency_invalid_reason %q with latency_valid %v", res.LatencyInvalid, *tc.valid)
			}
			c := res.Linkem
			if c.Frames == 0 || c.P99Ms < tc.p99Ms/1.26 || c.P99Ms > tc.p99Ms*1.26 || c.Window != "load_start to drained" {
				t.Errorf("check %+v, want p99 ≈ %v ms over load_start to drained", c, tc.p99Ms)
			}
			var onDisk rundir.LinkLateness
			data, err := os.ReadFile(filepath.Join(dir, rundir.LinkemDir, rundir.LinkemLatenessFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.Verdict != c.Verdict {
				t.Errorf("lateness.json %s (%v), want the verdict %q", data, err, c.Verdict)
			}
			sum := Summary(res)
			for _, want := range tc.summary {
				if !strings.Contains(sum, want) {
					t.Errorf("summary lacks %q:\n%s", want, sum)
				}
			}
		})
	}
}

// line is one lateness record line: cumulative frames per lateness.
type line struct {
	t        time.Time
	minDelay time.Duration
	frames   map[time.Duration]uint64
	maxNs    int64
}

func writeSeries(t *testing.T, dir string, lines []line) {
	t.Helper()
	var b bytes.Buffer
	enc := rundir.LinkemLatenessSeries.NewEncoder(&b)
	for _, l := range lines {
		s := rundir.LinkemLatenessSample{Time: l.t, MaxNs: l.maxNs, MinDelayNs: int64(l.minDelay), Counts: make([]uint64, linkem.LatBuckets)}
		for d, n := range l.frames {
			i := 0
			for int64(d) > linkem.LatUpper(i) {
				i++
			}
			s.Counts[i] += n
			s.Frames += n
			s.SumNs += int64(d) * int64(n)
		}
		if err := enc.Encode(&s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, rundir.LinkemDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.LinkemDir, rundir.LinkemLatenessSeriesFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeEvents(t *testing.T, dir string, events []rundir.Event) {
	t.Helper()
	var b bytes.Buffer
	for _, e := range events {
		data, _ := json.Marshal(e)
		b.Write(append(data, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.Events), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyCase copies a case's input files (not its want.* goldens).
func copyCase(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), "want.") {
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

func ptr[T any](v T) *T { return &v }
