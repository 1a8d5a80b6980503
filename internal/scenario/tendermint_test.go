package scenario

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/chainreport"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

const (
	subnetTendermint = "10.213.205.0/24"
	subnetRenamedNS  = "10.213.206.0/24"
)

var tm0342 = release.Release{Name: "tendermint", Version: "v0.34.22"}

// TestTendermintQuickstart is the quickstart on Tendermint Core v0.34.22
// (4 validators, 150 tx/s for 15 s): the whole load commits, and every plot
// of the report has data, read from the nodes' tendermint_* series.
func TestTendermintQuickstart(t *testing.T) {
	needRoot(t)
	needTool(t, tm0342, "cometbft")
	runNamespaced(t, subnetTendermint, "tendermint", map[string]map[string]string{
		"node.validator": {"release": `"tendermint@v0.34.22"`},
	})
}

// TestRenamedNamespaceQuickstart: CometBFT v1.0.1 with
// instrumentation.namespace = "renamed" exports renamed_* series, and every
// plot reads them.
func TestRenamedNamespaceQuickstart(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	runNamespaced(t, subnetRenamedNS, "renamed", map[string]map[string]string{
		"node.validator.config": {`"instrumentation.namespace"`: `"renamed"`},
	})
}

func runNamespaced(t *testing.T, subnet, ns string, edits map[string]map[string]string) {
	const rate, seconds = 150, 15
	edits["load"] = map[string]string{"rate": "150", "duration": `"15s"`, "warmup": `"10s"`, "grace": `"15s"`}
	m := example(t, "quickstart.toml", subnet, edits)
	out := steadyRun(t, m, 3*time.Minute)
	res := out.Results
	a := res.Accounting
	t.Logf("sent %d, send errors %d, committed %d, rejected %d, lost %d", a.Sent, a.SendErrors, a.Committed, a.Rejected, a.Lost)
	t.Logf("TPS %.1f over %.3f s; latency (%s) ms: avg %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f; peak mempool %d",
		res.TxPerSecond, res.DurationSec, res.LatencyBlock, res.AvgLatencyMs, res.P50LatencyMs, res.P95LatencyMs, res.P99LatencyMs, res.MaxLatencyMs, res.PeakMempool)
	if a.Sent != rate*seconds || a.SendErrors != 0 {
		t.Errorf("sent %d with %d send errors, want all %d sent", a.Sent, a.SendErrors, rate*seconds)
	}
	if a.Committed != a.Sent {
		t.Errorf("committed %d of %d sent", a.Committed, a.Sent)
	}

	// The plan records the namespace, the nodes export under it only.
	var p plan.Testnet
	d, err := rundir.Open(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ReadJSON(rundir.Plan, &p); err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		if n.MetricsNamespace != ns {
			t.Errorf("plan: %s metrics_namespace %q, want %q", n.Name, n.MetricsNamespace, ns)
		}
	}
	series := map[string]int{}
	_, _, err = rundir.SamplesCSV.ReadFileFilter(rundir.SamplesCSV.Path(d), func(s *rundir.Sample) bool {
		if prefix, _, ok := strings.Cut(s.Metric, "_"); ok && (prefix == ns || prefix == manifest.KindCometBFT) {
			series[prefix]++
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("samples by namespace: %v", series)
	if series[ns] == 0 || (ns != "cometbft" && series["cometbft"] != 0) {
		t.Errorf("samples.csv.gz: %v, want %s_* series only", series, ns)
	}

	// Every plot has data: the data they are drawn from, not a PNG.
	empty, err := chainreport.EmptyPlots(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for title, why := range empty {
		titles = append(titles, title)
		t.Errorf("plot %q has no data: %s", title, why)
	}
	sort.Strings(titles)
	t.Logf("%d plots, %d without data %v", len(chainreport.PlotTitles()), len(empty), titles)
	md, _ := os.ReadFile(filepath.Join(out.RunDir, report.MarkdownFile))
	if want := "The rate of " + ns + "_consensus_height over 60 s"; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
	provs, _ := filepath.Glob(filepath.Join(out.RunDir, "provenance", "*"))
	for _, f := range provs {
		b, _ := os.ReadFile(f)
		head := strings.SplitN(string(b), "\n", 4)
		t.Logf("provenance %s (%d bytes): %s", filepath.Base(f), len(b), strings.Join(head[:min(3, len(head))], " | "))
	}

	runID, pids := runIdentity(t, out.RunDir)
	checkNothingLeft(t, runID, pids)
}
