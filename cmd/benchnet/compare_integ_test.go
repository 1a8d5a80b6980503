package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	gossipmetrics "github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// timeoutManifest: the quickstart at a fixed load, three variants: the
// base (timeout_commit 1s, v1.0.1's default), the same configuration again,
// and timeout_commit raised to 3s, which must make every tx wait about two
// seconds longer for its block.
const timeoutManifest = `name = "cmpinteg"
seed = 1
[network]
subnet = "10.213.224.0/24"
[node.validator]
count = 4
release = "cometbft@v1.0.1"
[node.validator.config]
"log_level" = "error"
"consensus.timeout_commit" = "1s"
[load]
rate = 100
duration = "8s"
grace = "15s"
warmup = "20s"

[variants.base]
[variants.same]
[variants.slow.node.validator.config]
"consensus.timeout_commit" = "3s"
`

// TestCompareTimeoutCommit: `benchnet compare` of the three variants, two
// repeats each, exits 3 naming the slow variant's latency; the same
// configuration judged against the base from the run directories exits 0.
func TestCompareTimeoutCommit(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	m := filepath.Join(t.TempDir(), "cmp.toml")
	if err := os.WriteFile(m, []byte(timeoutManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	// The verdicts that decide: throughput and latency. (Peaks, RSS and CPU
	// are judged and printed too, but two short repeats are too few for them.)
	failOn := "tps,latency_avg,latency_p50,latency_p95"
	var b []byte
	var err error
	var out string
	retryStolen(t, func(attempt int) (string, bool) {
		out = filepath.Join(testenv.OutputDir(t), fmt.Sprintf("try%d", attempt))
		cmd := exec.Command(bin, "compare", m, "--repeats", "2", "--cooldown", "1s", "--fail-on", failOn, "--output", out)
		b, err = cmd.CombinedOutput()
		return string(b), exitOf(err) == exitThreshold
	})
	if code := exitOf(err); code != exitThreshold {
		t.Fatalf("benchnet compare: exit %d, want %d\n%s", code, exitThreshold, lastLines(string(b), 40))
	}
	if line := regressionLine(string(b)); !strings.Contains(line, "slow: latency_avg") {
		t.Errorf("output does not name the slow variant's latency:\n%s", lastLines(string(b), 40))
	}
	if strings.Contains(string(b), "same: latency") || strings.Contains(string(b), "same: tps") {
		t.Errorf("the same configuration regressed:\n%s", lastLines(string(b), 40))
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-cmpinteg-compare"))
	if len(dirs) != 1 {
		t.Fatalf("want one compare directory, got %v", dirs)
	}
	idx, err := experiment.ReadCompareIndex(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	byVariant := map[string][]string{}
	for _, r := range idx.Runs {
		order = append(order, r.Variant)
		if r.Status != rundir.RunDone {
			t.Fatalf("run %d (%s): %s %s", r.Order, r.Variant, r.Status, r.Error)
		}
		byVariant[r.Variant] = append(byVariant[r.Variant], r.RunPath(dirs[0]))
	}
	// Rounds alternate their order (AB…, …BA) so no variant always runs
	// first or last on a warming machine (experiment.CompareOrder).
	if got := strings.Join(order, " "); got != "base same slow slow same base" {
		t.Errorf("run order %q, want interleaved rounds in alternating order", got)
	}
	// Re-rendering gives the same bytes.
	before := compareFiles(t, dirs[0])
	if b, err := exec.Command(bin, "report", dirs[0]).CombinedOutput(); err != nil {
		t.Fatalf("benchnet report: %v\n%s", err, b)
	}
	after := compareFiles(t, dirs[0])
	for name, want := range before {
		if string(after[name]) != string(want) {
			t.Errorf("re-render: %s differs", name)
		}
	}

	// The same configuration twice, from the finished run directories.
	b, err = exec.Command(bin, "compare", "base="+strings.Join(byVariant["base"], ","), "same="+strings.Join(byVariant["same"], ","),
		"--fail-on", failOn, "--output", out).CombinedOutput()
	if code := exitOf(err); code != exitOK {
		t.Fatalf("A/A compare: exit %d, want 0\n%s", code, lastLines(string(b), 40))
	}
	t.Logf("A/A:\n%s", b)
}

// regressionLine is the verdict line compare prints last.
func regressionLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "REGRESSION (exit 3): ") {
			return l
		}
	}
	return ""
}

func compareFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	names := []string{"compare.md", "compare.html", "compare.json"}
	plots, _ := filepath.Glob(filepath.Join(dir, "plots", "*.png"))
	sort.Strings(plots)
	for _, p := range plots {
		names = append(names, filepath.Join("plots", filepath.Base(p)))
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

// gossipCompareManifest: 8 gossipsub hosts, 10 ms one-way per link, on a
// line (the base: every message from gossip0 crosses 7 hops) and on a full
// mesh (every host one hop from the publisher).
const gossipCompareManifest = `name = "gcmpinteg"
seed = 42
[network]
subnet = "10.77.48.0/24"
topology = "line"
delay = "10ms"
[node.gossip]
kind = "gossipsub"
count = 8
[publish]
rate = 20
count = 40
size = 1000
source = "gossip0"
warmup = "3s"
cooldown = "2s"

[variants.line]
[variants.full]
network.topology = "full"
`

// TestCompareGossip: `benchnet compare` on real gossipsub hosts, two
// variants, two repeats each: compare.json judges the gossip metrics (the
// full mesh's hops are an improvement over the line's, MDR the same), the
// report has the series overlays, and `benchnet report` re-renders it
// byte for byte from the directory alone.
func TestCompareGossip(t *testing.T) {
	testenv.NeedRoot(t)
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := filepath.Join(t.TempDir(), "gcmp.toml")
	if err := os.WriteFile(m, []byte(gossipCompareManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	// A full mesh carries more duplicates than a line: judged, not failed on.
	b, err := exec.Command(bin, "compare", m, "--repeats", "2", "--cooldown", "1s", "--fail-on", "mdr,max_hop,last_delivery_hop",
		"--output", out).CombinedOutput()
	if code := exitOf(err); code != exitOK {
		t.Fatalf("benchnet compare: exit %d, want 0\n%s", code, lastLines(string(b), 40))
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-gcmpinteg-compare"))
	if len(dirs) != 1 {
		t.Fatalf("want one compare directory, got %v", dirs)
	}
	idx, err := experiment.ReadCompareIndex(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if idx.NodeKind != "gossipsub" || len(idx.Runs) != 4 {
		t.Fatalf("compare.json: node kind %q, %d runs; want gossipsub, 4", idx.NodeKind, len(idx.Runs))
	}
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			t.Fatalf("run %d (%s): %s %s", r.Order, r.Variant, r.Status, r.Error)
		}
	}
	if len(idx.Verdicts) != 1 || idx.Verdicts[0].Variant != "full" {
		t.Fatalf("verdicts %+v, want the full mesh judged against the line", idx.Verdicts)
	}
	got := map[string]judge.Judgement{}
	for _, j := range idx.Verdicts[0].Judgements {
		got[j.Metric] = j
	}
	for _, metric := range gossipmetrics.Metrics {
		if _, ok := got[metric.Key]; !ok {
			t.Errorf("compare.json does not judge %s", metric.Key)
		}
	}
	if j := got["max_hop"]; j.Verdict != judge.OutcomeImprovement || j.Base < 6 || j.Variant > 2 {
		t.Errorf("max hop, full vs line: %+v; want an improvement from ~7 hops to <= 2", j)
	}
	if j := got["mdr"]; j.Verdict != judge.OutcomeSame || j.Base != 100 {
		t.Errorf("MDR, full vs line: %+v; want the same, 100 %%", j)
	}
	md, _ := os.ReadFile(filepath.Join(dirs[0], "compare.md"))
	for _, s := range []string{"Dissemination time, overlaid", "Last-delivery hop, overlaid", "### Message delivery ratio", "| line | 2 of 2 | line, delay 10ms |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("compare.md lacks %q", s)
		}
	}
	before := compareFiles(t, dirs[0])
	if b, err := exec.Command(bin, "report", dirs[0]).CombinedOutput(); err != nil {
		t.Fatalf("benchnet report: %v\n%s", err, b)
	}
	after := compareFiles(t, dirs[0])
	for name, want := range before {
		if string(after[name]) != string(want) {
			t.Errorf("re-render: %s differs", name)
		}
	}
}
