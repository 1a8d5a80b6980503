package gossipreport

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/topology"
)

var updateRuns = flag.Bool("update-gossip-runs", false, "regenerate testdata/gossip-m2 and gossip-m6 (synthetic run directories)")

// makeGossipRun writes a small synthetic gossip run (gossiptest's flood on a
// Barabási–Albert graph, a killed host, proc samples) and its analysis.
func makeGossipRun(t *testing.T, dir string, m int) {
	const n = 16
	e, err := topology.Edges(topology.Spec{Kind: topology.BarabasiAlbert, M: m}, n, 42)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: topology.Adjacency(n, e), Delay: 25 * time.Millisecond,
		Fanout: 3, Seed: 3, ProcSamples: 5, Killed: map[int]int64{5: 1_700_000_002_000_000_000}}
	msgs := gossiptest.Schedule(n, 60, 20, 1_700_000_000_000_000_000, 42)
	// A publisher that blocked (Whiteblock 004's Graphs 10 and 11): messages
	// 20-29 go out late, the first 72 ms, then in a burst until 29 is on
	// time again; within the validity rule (lag p99 <= 100 ms).
	for i := 20; i < 30; i++ {
		msgs[i].Late = time.Duration(29-i) * 8 * time.Millisecond
	}
	if _, err := gossiptest.Write(dir, net, msgs); err != nil {
		t.Fatal(err)
	}
	describeGossipRun(t, dir, e)
	if _, err := analysis.Run(&rundir.Dir{Path: dir}); err != nil {
		t.Fatal(err)
	}
}

// describeGossipRun adds what a real run records about itself: the
// router and workload parameters and the graph in plan.json, the machine,
// the link-emulation backend.
func describeGossipRun(t *testing.T, dir string, edges [][2]int) {
	t.Helper()
	d := &rundir.Dir{Path: dir}
	var p plan.Testnet
	if err := d.ReadJSON(rundir.Plan, &p); err != nil {
		t.Fatal(err)
	}
	p.Seed, p.Edges = 42, edges
	p.Publish = &manifest.Publish{Rate: 20, Size: 1000, Count: 60, Source: "random",
		Warmup: rundir.Duration{Duration: 5 * time.Second}, Cooldown: rundir.Duration{Duration: 5 * time.Second}}
	if err := p.SetKindTables(&spec.Tables{Gossipsub: spec.Gossipsub{D: 6, Dlo: 5, Dhi: 12, Dlazy: 6, Heartbeat: rundir.Duration{Duration: time.Second},
		OutboundQueue: 32, ValidateQueue: 32}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		n.Release = spec.Release
	}
	if err := d.WriteJSON(rundir.Plan, &p); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteMachine(&rundir.Machine{Hostname: "synthetic", Kernel: "6.1.0-test", CPUModel: "Test CPU @ 2.00GHz", CPUs: 2,
		MemoryBytes: 24 << 30, GoVersion: "go1.24.0", OS: "linux", Arch: "amd64"}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(d.Join(rundir.LinkemDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteLinkemInfo(&rundir.LinkemInfo{Backend: "userspace", Reason: "synthetic run"}); err != nil {
		t.Fatal(err)
	}
}

func gossipRunDir(t *testing.T, m int) string {
	t.Helper()
	src := filepath.Join("testdata", fmt.Sprintf("gossip-m%d", m))
	if *updateRuns {
		makeGossipRun(t, src, m)
	}
	return testenv.CopyDir(t, src)
}

func TestRenderGossipGolden(t *testing.T) {
	dir := gossipRunDir(t, 2)
	written, err := report.Render(dir, "") // dispatches on results.json's gossip section
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/gossip-m2.report.md"
	testenv.Golden(t, golden, md)
	for _, s := range []string{"# benchnet gossip report:", "`host_exited`", "| host5 |", "**down**",
		// The Whiteblock 004 views (issue 23).
		"## Publisher timeline", "| harness send | 50.0 | 50.0 | 122.0 | 122.0 | 0.0 | 72.0 | 72.0 |",
		"plots/gossip_interarrival.png", "plots/gossip_transmission.png", "plots/gossip_cpu_time.png", "plots/gossip_rss_time.png",
		"## Parameters and machine", "| router D / Dlo / Dhi / Dlazy | 6 / 5 / 12 / 6 |", "| machine | Test CPU @ 2.00GHz, 2 CPUs, 24.0 GiB |",
		"## Differences from Whiteblock 004", "25365 / 30000 is 84.55 %", "236"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	// Re-rendering gives the same bytes, plots included.
	testenv.SameOnRerender(t, written, func() error { _, err := RenderGossip(dir, ""); return err })
	if pngs := len(written) - 2; pngs != len(GossipPlotTitles()) {
		t.Errorf("%d plots written, want %d", pngs, len(GossipPlotTitles()))
	}
}

func TestGossipChromium(t *testing.T) {
	testenv.Integration(t) // a real browser, 6-9 s
	bin := report.Browser()
	if bin == "" {
		testenv.Skip(t, "no chromium on PATH: `go run ./cmd/benchnet setup --tests` installs Debian's chromium")
	}
	dir := gossipRunDir(t, 2)
	if _, err := RenderGossip(dir, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sizes, inked, err := report.BrowserCheck(ctx, bin, dir, t.TempDir(), filepath.Join(dir, "shot.png"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("browser image sizes: %v; screenshot %.1f%% inked", sizes, 100*inked)
	if len(sizes) != len(GossipPlotTitles()) {
		t.Errorf("browser saw %d images, want %d: %v", len(sizes), len(GossipPlotTitles()), sizes)
	}
	for _, title := range GossipPlotTitles() {
		var w, h int
		if _, err := fmt.Sscanf(sizes[title], "%dx%d", &w, &h); err != nil || w < 500 || h < 250 {
			t.Errorf("plot %q loaded as %q", title, sizes[title])
		}
	}
	if inked < 0.01 {
		t.Errorf("screenshot looks blank: %.2f%% inked", 100*inked)
	}
}

// The per-host outages cell lists each outage; an older results.json
// without them still shows "exited".
func TestHostOutagesCell(t *testing.T) {
	for _, tc := range []struct {
		n    rundir.GossipNode
		want string
	}{
		{rundir.GossipNode{}, ""},
		{rundir.GossipNode{Exited: true}, "**exited**"},
		{rundir.GossipNode{Exited: true, Outages: []rundir.Outage{{Cause: "down", Sec: 3, Undone: true}, {Cause: "paused", Sec: 1.25, Undone: true}}}, "**down** 3.0 s, paused 1.2 s"},
		{rundir.GossipNode{Outages: []rundir.Outage{{Cause: "cut_off", Sec: 2}}}, "cut off 2.0 s (to the end)"},
	} {
		if got := hostOutages(tc.n); got != tc.want {
			t.Errorf("hostOutages(%+v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
