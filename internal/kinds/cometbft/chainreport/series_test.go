package chainreport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// testnetOf is a plan with count nodes of each role, named role0, role1…
func testnetOf(counts map[string]int) *plan.Testnet {
	t := &plan.Testnet{Name: "t"}
	for _, role := range page.SortedKeys(counts) {
		for i := 0; i < counts[role]; i++ {
			t.Nodes = append(t.Nodes, &plan.Node{Name: fmt.Sprintf("%s%d", role, i), Role: role})
		}
	}
	return t
}

// sawtooth is a mempool that fills at 100 txs per block and empties at each
// block, blocks every 1.2 s: what a steady run does.
func sawtooth(t float64) float64 { return math.Mod(t, 1.2) / 1.2 * 100 }

// largeDrops counts falls of more than 40 % of the range: block commits.
func largeDrops(xy plotter.XYs) int {
	n := 0
	for i := 1; i < len(xy); i++ {
		if xy[i-1].Y-xy[i].Y > 40 {
			n++
		}
	}
	return n
}

func TestMempoolSeriesExcludesSeedsAndDoesNotAlias(t *testing.T) {
	const span = 30.0 // s: 25 blocks
	r := &run{plan: testnetOf(map[string]int{"validator": 3, "full": 2, "seed": 2}), samples: map[string][]rundir.Sample{}}
	for i, n := range r.plan.Nodes {
		n.Index = i
	}
	for _, n := range r.plan.Nodes {
		// The poller: every 500 ms, one time for all nodes of a round.
		for x := 0.0; x < span; x += 0.5 {
			v := sawtooth(x)
			if n.Role == "seed" {
				v = 0 // seeds keep no txs
			}
			r.mempool = append(r.mempool, nodeValue{timeNs: int64(x * 1e9), node: n.Name, value: v})
		}
		// The Prometheus scrape: every 1 s, a few ms apart per node.
		for x := 0.0; x < span; x++ {
			at := x + 0.003*float64(n.Index)
			r.samples["mempool_size"] = append(r.samples["mempool_size"],
				rundir.Sample{TimeNs: int64(at * 1e9), Node: n.Name, Metric: "cometbft_mempool_size", Value: sawtooth(at)})
		}
	}

	nodes, series, src := r.mempoolSeries()
	if len(nodes) != 5 || !strings.HasPrefix(src, "mempool.csv") {
		t.Fatalf("mempool series of %v from %q, want the 5 full nodes and validators from mempool.csv", nodes, src)
	}
	for _, n := range nodes {
		if r.roleOf(n) == "seed" {
			t.Errorf("seed %s is in the mempool series", n)
		}
	}
	avg := aggregate(nodes, series, mean)
	for _, p := range avg {
		if want := sawtooth(p.X); math.Abs(p.Y-want) > 1e-6 {
			t.Fatalf("average at %.1f s = %.2f, want %.2f (seeds pulled it down?)", p.X, p.Y, want)
		}
	}
	// One fall per block: 25 blocks in 30 s.
	if d := largeDrops(avg); d < 23 || d > 25 {
		t.Errorf("the plotted average falls %d times in %g s, want one per 1.2 s block (~25)", d, span)
	}
	if tot := aggregate(nodes, series, sum); tot[3].Y != 5*sawtooth(tot[3].X) {
		t.Errorf("cumulative at %.1f s = %g, want %g", tot[3].X, tot[3].Y, 5*sawtooth(tot[3].X))
	}

	// Control: the 1 s scrape of the same chain draws the slow (6 s) aliased
	// sawtooth this test would catch, with no fall of a block in it.
	r.mempool = nil
	nodes, series, src = r.mempoolSeries()
	if !strings.Contains(src, "alias") {
		t.Errorf("the scrape fallback does not warn of aliasing: %q", src)
	}
	if d := largeDrops(aggregate(nodes, series, mean)); d > 2 {
		t.Errorf("control: the 1 s scrape shows %d block falls; the aliasing check is not sensitive", d)
	}
}

func TestDrawNodesGroupsByRolePastADozen(t *testing.T) {
	for _, c := range []struct {
		counts  map[string]int
		how     string
		legends int
	}{
		{map[string]int{"validator": 4}, "per node", 4 + 1},                  // 4 nodes + average
		{map[string]int{"validator": 4, "full": 8}, "per node", 12 + 1},      // 12: still per node
		{map[string]int{"validator": 5, "full": 8, "seed": 2}, "by role", 6}, // mean and max of 3 roles
	} {
		r := &run{plan: testnetOf(c.counts)}
		series := map[string]plotter.XYs{}
		var nodes []string
		for i, n := range r.plan.Nodes {
			nodes = append(nodes, n.Name)
			for x := 0.0; x < 10; x++ {
				series[n.Name] = append(series[n.Name], plotter.XY{X: x + 0.001*float64(i), Y: float64(i)})
			}
		}
		p := page.NewPlot("t", "x", "y")
		how := r.drawNodes(p, nodes, series, true)
		got := page.ForgetLegend(p)
		if how != c.how || got != c.legends {
			t.Errorf("%v: drawn %s with %d legend entries, want %s with %d", c.counts, how, got, c.how, c.legends)
		}
	}
}

// TestAggregateMean: the average over nodes per sampling round, with the
// nodes' samples a few ms apart.
func TestAggregateMean(t *testing.T) {
	series := map[string]plotter.XYs{
		"a": {{X: 0.000, Y: 10}, {X: 1.000, Y: 20}, {X: 2.000, Y: 30}},
		"b": {{X: 0.004, Y: 30}, {X: 1.004, Y: 40}, {X: 2.004, Y: 50}},
	}
	got := aggregate([]string{"a", "b"}, series, mean)
	want := []float64{20, 30, 40}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Y != want[i] || math.Abs(got[i].X-float64(i)-0.002) > 1e-9 {
			t.Errorf("round %d = %v, want (%.3f, %g)", i, got[i], float64(i)+0.002, want[i])
		}
	}
}

func TestInlineMarkdownLinks(t *testing.T) {
	for in, want := range map[string]string{
		"see [Events](#events).":      `see <a href="#events">Events</a>.`,
		"[a](#x) · [b](#y)":           `<a href="#x">a</a> · <a href="#y">b</a>`,
		"**bold** and `code` [e](#e)": `<b>bold</b> and <code>code</code> <a href="#e">e</a>`,
		"not a link [x] (y)":          "not a link [x] (y)",
		"<script>[x](#y)</script>":    `&lt;script&gt;<a href="#y">x</a>&lt;/script&gt;`,
		`quote [x](#a"onmouseover=1)`: `quote <a href="#a&#34;onmouseover=1">x</a>`,
	} {
		if got := page.InlineMd(in); got != want {
			t.Errorf("page.InlineMd(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLoadThatRan: a run with --connections 2 --rate 700 shows that load,
// and what the manifest said, in the headline and the parameters.
func TestLoadThatRan(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	p := filepath.Join(dir, "plan.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"rate": 6,`), []byte(`"rate": 700,`), 1)
	b = bytes.Replace(b, []byte(`"connections": 1,`), []byte(`"connections": 2,`), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	for _, want := range []string{
		"| offered load | constant 700 tx/s × 2 connections (target round-robin)",
		"| rate | 700 | **200** (overridden) |",
		"| connections | 2 | **1** (overridden) |",
		"| size | 1024 |  |",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// The headline comes before the parameters.
	if h, pm := bytes.Index(md, []byte("## Headline")), bytes.Index(md, []byte("## Parameters")); h < 0 || pm < h {
		t.Errorf("headline at %d, parameters at %d", h, pm)
	}
}

// TestPerMinuteFromLoadStart: samples every second of a counter idle for 5 s
// (the collector's head start) then rising 200 a second. From the first
// sample the rate ramps (at 6 s: 200/6 s = 2000/min); from the load's start
// every point is the load's 12000/min.
func TestPerMinuteFromLoadStart(t *testing.T) {
	var xy plotter.XYs
	for s := 0; s <= 30; s++ {
		xy = append(xy, plotter.XY{X: float64(s), Y: 200 * math.Max(0, float64(s-5))})
	}
	ramp := perMinute(xy, math.Inf(-1))
	if ramp[0].X != 1 || math.Abs(ramp[5].Y-2000) > 1e-9 {
		t.Errorf("from the first sample: first point %v, at 6 s %v; want x = 1, 2000/min at 6 s", ramp[0], ramp[5])
	}
	got := perMinute(xy, 5)
	if len(got) != 25 || got[0].X != 6 {
		t.Fatalf("from the load's start: %d points from %v; want 25 from x = 6", len(got), got[0])
	}
	for _, p := range got {
		if p.Y != 12000 {
			t.Errorf("at %v s: %v/min, want 12000", p.X, p.Y)
		}
	}
	if got := perMinute(xy, 5.5); len(got) != 25 || got[0].Y != 12000 {
		t.Errorf("load start between samples: %d points, first %v; want 25 at 12000/min", len(got), got[0])
	}
}
