package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/chainreport"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestSteadyQuickstart is `benchnet run examples/quickstart.toml --rate 200
// --duration 20s` end to end: 4 real v1.0.1 validators in namespaces, exact
// accounting, results.json in the Initia shape, txs.csv, the report with its
// plots, and nothing of the run left afterwards.
func TestSteadyQuickstart(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	const rate, seconds = 200, 20
	m := example(t, "quickstart.toml", subnetSteady, map[string]map[string]string{
		"load": {"rate": "200", "duration": `"20s"`, "warmup": `"20s"`, "grace": `"15s"`},
	})
	out := steadyRun(t, m, 2*time.Minute)
	res := out.Results

	// Exact accounting: the schedule attempts rate × duration txs, every
	// attempt is sent or a send error, every sent tx is in one final state.
	a := res.Accounting
	t.Logf("sent %d, send errors %d, committed %d, rejected %d, lost %d, duplicates %d",
		a.Sent, a.SendErrors, a.Committed, a.Rejected, a.Lost, a.Duplicates)
	if got := a.Sent + a.SendErrors; got != rate*seconds {
		t.Errorf("attempted %d txs (sent %d + send errors %d), want exactly %d", got, a.Sent, a.SendErrors, rate*seconds)
	}
	if a.SendErrors != 0 {
		t.Errorf("%d send errors on a healthy testnet: %s", a.SendErrors, sendErrorLogs(t, out.RunDir))
	}
	if a.Sent != a.Committed+a.Rejected+a.Lost {
		t.Errorf("identity broken: sent %d != committed %d + rejected %d + lost %d", a.Sent, a.Committed, a.Rejected, a.Lost)
	}
	if a.Committed == 0 {
		t.Errorf("nothing committed")
	}
	if a.Rejected != 0 || a.Lost != 0 {
		t.Errorf("a healthy quickstart at %d tx/s rejected %d and lost %d txs", rate, a.Rejected, a.Lost)
	}
	if res.LatencyBlock != "H+1" || res.Latency.N == 0 || res.Latency.P50 <= 0 {
		t.Errorf("headline latency (%s) missing: %+v", res.LatencyBlock, res.Latency)
	}
	if res.Latency.N != a.Committed {
		t.Errorf("H+1 latency for %d of %d committed txs", res.Latency.N, a.Committed)
	}
	if !res.Valid {
		t.Errorf("run marked invalid: %v", res.Invalid)
	}
	t.Logf("TPS %.1f over %.3f s; latency H+1 ms: avg %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f; peak mempool %d",
		res.TxPerSecond, res.DurationSec, res.AvgLatencyMs, res.P50LatencyMs, res.P95LatencyMs, res.P99LatencyMs, res.MaxLatencyMs, res.PeakMempool)

	checkResultsJSON(t, out.RunDir, res)
	if rows := readCSV(t, filepath.Join(out.RunDir, rundir.TxsCSV.Name)); len(rows) != rate*seconds {
		t.Errorf("txs.csv has %d rows, want %d", len(rows), rate*seconds)
	}
	checkReport(t, out.RunDir, out.Report)
	checkRerender(t, out.RunDir)

	ev := readEvents(t, out.RunDir)
	harness, nodes, span := cpuShares(t, out.RunDir, eventTime(t, ev, "load_start"), eventTime(t, ev, "load_done"))
	t.Logf("CPU during the load (%s of proc.csv samples): harness %.1f %% of a core, 4 nodes together %.1f %% (harness/nodes %.2f)",
		span.Round(time.Millisecond), 100*harness, 100*nodes, harness/nodes)
	if harness <= 0 || nodes <= 0 {
		t.Errorf("proc.csv shows no CPU use: harness %.3f, nodes %.3f", harness, nodes)
	}

	runID, pids := runIdentity(t, out.RunDir)
	if len(pids) != 4 {
		t.Errorf("%d node_started events, want 4", len(pids))
	}
	checkNothingLeft(t, runID, pids)
}

// checkResultsJSON: results.json is valid JSON holding the Initia fields,
// with the values Steady returned.
func checkResultsJSON(t *testing.T, dir string, res *rundir.Results) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("results.json is not JSON: %v", err)
	}
	for _, k := range []string{"total_submitted", "total_included", "duration_sec", "tx_per_second",
		"avg_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "max_latency_ms",
		"peak_mempool_size", "block_stats"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	if got := doc["total_submitted"]; got != float64(res.TotalSubmitted) {
		t.Errorf("results.json total_submitted %v, Steady returned %d", got, res.TotalSubmitted)
	}
	if got := doc["total_included"]; got != float64(res.TotalIncluded) {
		t.Errorf("results.json total_included %v, Steady returned %d", got, res.TotalIncluded)
	}
	bs, _ := doc["block_summary"].(map[string]any)
	if bs == nil || bs["blocks"] == float64(0) {
		t.Fatalf("results.json block_summary empty: %v", doc["block_summary"])
	}
	// Initia's block_stats: one entry per block of the summary's range.
	entries, _ := doc["block_stats"].([]any)
	if n := bs["last_height"].(float64) - bs["first_height"].(float64) + 1; float64(len(entries)) < n {
		t.Errorf("results.json block_stats has %d blocks, its summary spans %v", len(entries), n)
	}
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m == nil || m["height"] == nil || m["tx_count"] == nil || m["time"] == "" {
			t.Errorf("results.json block_stats entry %v lacks height, tx_count or time", e)
			break
		}
	}
}

// checkReport: report.md and report.html exist, are listed, and every plot
// PNG they reference is non-empty.
func checkReport(t *testing.T, dir string, listed []string) {
	t.Helper()
	for _, f := range []string{report.MarkdownFile, report.HTMLFile} {
		p := filepath.Join(dir, f)
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 {
			t.Errorf("report file %s missing or empty: %v", f, err)
		}
		if !slices.Contains(listed, p) {
			t.Errorf("Steady did not list %s among the report files %v", p, listed)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, page.PlotsDir, "*.png"))
	if len(pngs) == 0 {
		t.Fatalf("no plots in %s", filepath.Join(dir, page.PlotsDir))
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	for _, p := range pngs {
		data, err := os.ReadFile(p)
		if err != nil || len(data) < 8 || string(data[1:4]) != "PNG" {
			t.Errorf("plot %s is not a non-empty PNG (%d bytes, %v)", p, len(data), err)
		}
		if rel := page.PlotsDir + "/" + filepath.Base(p); !strings.Contains(string(md), rel) {
			t.Errorf("report.md does not reference %s", rel)
		}
	}
	t.Logf("report: %d plots", len(pngs))
	if len(pngs) != len(chainreport.PlotTitles()) {
		t.Errorf("%d plot files, the report has %d plots", len(pngs), len(chainreport.PlotTitles()))
	}

	// What a reader sees: the HTML in a real browser, every plot loaded.
	bin := report.Browser()
	if bin == "" {
		t.Log("no chromium on PATH: browser check skipped (`go run ./cmd/benchnet setup --tests` installs it)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sizes, inked, err := report.BrowserCheck(ctx, bin, dir, t.TempDir(), filepath.Join(t.TempDir(), "shot.png"))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, title := range chainreport.PlotTitles() {
		var w, h int
		if _, err := fmt.Sscanf(sizes[title], "%dx%d", &w, &h); err != nil || w == 0 || h == 0 {
			t.Errorf("in Chromium, plot %q rendered as %q", title, sizes[title])
		}
	}
	if inked < 0.01 {
		t.Errorf("screenshot of report.html looks blank (%.2f%% inked)", 100*inked)
	}
	t.Logf("chromium: %d plots loaded, screenshot %.1f%% inked", len(sizes), 100*inked)
}

// checkRerender: the report is a pure function of the finished run
// directory: rendered again elsewhere, it is the same bytes as the run's.
func checkRerender(t *testing.T, dir string) {
	t.Helper()
	again := t.TempDir()
	if _, err := report.Render(dir, again); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.MarkdownFile, report.HTMLFile} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s rendered again differs from the run's (%d vs %d bytes)", f, len(b), len(a))
		}
	}
}

// sendErrorLogs summarises the send_error rows of sent.csv, for messages.
func sendErrorLogs(t *testing.T, dir string) string {
	t.Helper()
	count := map[string]int{}
	var last string
	for _, r := range readCSV(t, filepath.Join(dir, rundir.TxsCSV.Name)) {
		if r["state"] == rundir.StateSendError {
			count[r["node"]+": "+r["log"]]++
			last = "seq " + r["seq"]
		}
	}
	b, _ := json.Marshal(count)
	return string(b) + " (last at " + last + ")"
}
