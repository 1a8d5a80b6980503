package chainreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The emulator's check reaches the headline and the network section.
func TestReportLinkLateness(t *testing.T) {
	late := rundir.LinkLateness{Window: "load_start to drained", Frames: 20190, MeanMs: 0.9, P50Ms: 0.078, P99Ms: 182.054, MaxMs: 972.542,
		SmallestDelayMs: 72, BoundMs: 1.44, Met: false, Sched: "SCHED_FIFO 1", Verdict: "link emulator LATE: p50 0.078 ms, p99 182.054 ms"}
	onTime := late
	onTime.P99Ms, onTime.MaxMs, onTime.Met, onTime.Verdict = 0.212, 3.1, true, "link emulator on time: p99 0.212 ms"
	for _, tc := range []struct {
		name    string
		check   rundir.LinkLateness
		want    []string
		backend string // linkem.json's, when not the fixture's userspace
	}{
		{"late", late, []string{
			"latency: **INVALID**: the link emulator was late (p99 182.054 ms > bound 1.440 ms, max 972.5 ms)",
			"| 20190 | 0.900 | 0.078 | 182.054 | 972.542 | 72.000 | 1.440 | **NO** |",
			"link emulator LATE: p50 0.078 ms, p99 182.054 ms.",
			"Its delivery thread ran as SCHED_FIFO 1.",
		}, ""},
		{"on time", onTime, []string{
			"links on time (emulator p99 lateness 0.212 ms ≤ 1.440 ms)",
			"| 20190 | 0.900 | 0.078 | 0.212 | 3.100 | 72.000 | 1.440 | yes |",
			"How late the userspace switch handed delayed frames",
			"userspace switch counters at the end of the run",
		}, ""},
		{"agents on swarm", onTime, []string{
			"links on time (emulator p99 lateness 0.212 ms ≤ 1.440 ms)",
			"How late the nodes' link agents (an NFQUEUE agent in each node's task, their records merged) handed delayed frames",
			"counters of the link agents at the end of the run, one port per node and peer",
		}, linkem.KindAgent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/run1")
			patchResults(t, dir, tc.check)
			if tc.backend != "" {
				d := &rundir.Dir{Path: dir}
				info, err := d.ReadLinkemInfo()
				if err != nil {
					t.Fatal(err)
				}
				info.Backend = tc.backend
				if err := d.WriteLinkemInfo(info); err != nil {
					t.Fatal(err)
				}
			}
			var h strings.Builder
			if err := linkem.WriteLatenessMetrics(&h, linkem.Lateness{Frames: 1, Counts: make([]uint64, linkem.LatBuckets)}); err != nil {
				t.Fatal(err)
			}
			prom := "benchnet_linkem_sent_packets_total{port=\"validator0\"} 7\n" + h.String()
			if err := os.WriteFile(filepath.Join(dir, "linkem", rundir.LinkemCountersFile), []byte(prom), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Render(dir, ""); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(string(md), "## Parameters")
			if !strings.Contains(head, tc.want[0]) {
				t.Errorf("headline lacks %q:\n%s", tc.want[0], head)
			}
			for _, w := range tc.want[1:] {
				if !strings.Contains(string(md), w) {
					t.Errorf("report lacks %q", w)
				}
			}
			if !strings.Contains(string(md), `benchnet_linkem_sent_packets_total{port="validator0"} 7`) || strings.Contains(string(md), "lateness_seconds_bucket") {
				t.Errorf("counters: want the port counters without the histogram lines")
			}
		})
	}
}

func patchResults(t *testing.T, dir string, c rundir.LinkLateness) {
	t.Helper()
	path := filepath.Join(dir, "results.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["latency_valid"], m["linkem_lateness"] = c.Met, c
	if !c.Met {
		m["latency_invalid_reason"] = c.Verdict
	}
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
