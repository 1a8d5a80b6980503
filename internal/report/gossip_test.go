package report

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze/gossip"
	"github.com/benchnet/benchnet/internal/analyze/gossip/gossiptest"
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
	if _, err := gossiptest.Write(dir, net, gossiptest.Schedule(n, 60, 20, 1_700_000_000_000_000_000, 42)); err != nil {
		t.Fatal(err)
	}
	if _, err := gossip.Run(&rundir.Dir{Path: dir}); err != nil {
		t.Fatal(err)
	}
}

func gossipRunDir(t *testing.T, m int) string {
	t.Helper()
	src := filepath.Join("testdata", fmt.Sprintf("gossip-m%d", m))
	if *updateRuns {
		makeGossipRun(t, src, m)
	}
	return copyDir(t, src)
}

func TestRenderGossipGolden(t *testing.T) {
	dir := gossipRunDir(t, 2)
	written, err := Render(dir, "") // dispatches on results.json's gossip section
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/gossip-m2.report.md"
	if *update {
		if err := os.WriteFile(golden, md, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update)", err)
	}
	if !bytes.Equal(md, want) {
		t.Errorf("report.md differs from %s (go test -update to accept)", golden)
	}
	for _, s := range []string{"# benchnet gossip report:", "`host_exited`", "| host5 |", "**exited**"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	// Re-rendering gives the same bytes, plots included.
	first := map[string][]byte{}
	for _, p := range written {
		first[p], _ = os.ReadFile(p)
	}
	if _, err := RenderGossip(dir, ""); err != nil {
		t.Fatal(err)
	}
	for p, b := range first {
		if again, _ := os.ReadFile(p); !bytes.Equal(again, b) {
			t.Errorf("%s changed on re-render", filepath.Base(p))
		}
	}
	if pngs := len(written) - 2; pngs != len(GossipPlotTitles()) {
		t.Errorf("%d plots written, want %d", pngs, len(GossipPlotTitles()))
	}
}

func TestGossipChromium(t *testing.T) {
	bin := Browser()
	if bin == "" {
		testenv.Skip(t, "no chromium on PATH: `go run ./cmd/benchnet setup --tests` installs Debian's chromium")
	}
	dir := gossipRunDir(t, 2)
	if _, err := RenderGossip(dir, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sizes, inked, err := BrowserCheck(ctx, bin, dir, t.TempDir(), filepath.Join(dir, "shot.png"))
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
