package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// qaDir is a hand-made QA directory (testdata/name) with run1 as every
// compare run.
func qaDir(t *testing.T, name string) string {
	t.Helper()
	dir := copyDir(t, filepath.Join("testdata", name))
	for _, step := range []string{"steady", "le"} {
		for _, r := range []string{"b1", "c1"} {
			run := copyDir(t, chainRun)
			dst := filepath.Join(dir, "steps", step, "runs", r)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(run, dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestRenderQAGolden(t *testing.T) {
	dir := qaDir(t, "qa1")
	written, err := RenderQA(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, QAMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/qa1.qa.md", md)
	for _, s := range []string{"## Test Results", "| Steady test | 2026-11-24 | cometbft@v1.0.1 (0a1b2c3d4e5f) | Fail |", "Pass (not judged)",
		"## Saturation point", "Chosen load: 320 tx/s", "maximum of 3 repeats", "## Rotating nodes", "## Method", "scaled", "qa_latency_per_block.png", "qa_saturation_overlay.png"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("qa.md lacks %q", s)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, QAHTMLFile))
	if !strings.Contains(string(html), "data:image/png;base64,") || strings.Contains(string(html), `src="plots/`) {
		t.Error("qa.html is not self-contained")
	}
	// Byte-identical on re-render.
	testenv.SameOnRerender(t, written, func() error { _, err := RenderQA(dir); return err })
}

// TestRenderQAPairedGolden: a saturation step decided by pairs states the
// rule's interval, the busy span's definition (the share its code uses),
// every pair with its ratio, and why an excluded pair does not count; the
// candidate, not searched, gets no sweep section.
func TestRenderQAPairedGolden(t *testing.T) {
	dir := qaDir(t, "qa2")
	if _, err := RenderQA(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, QAMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/qa2.qa.md", md)
	for _, s := range []string{"### Paired decision", "**same** — ratio 0.985 [0.918, 1.056]",
		fmt.Sprintf("by which %g %% of its committed txs were in", 100*rundir.BusyShare),
		"Minimum detectable effect at 3 pairs (80 % power, the test's level): 5.4 %",
		"| 1 | baseline | 512.4 | 498.1 | 0.972 | — |", "| 2 | baseline | 505.0 | – | – | candidate: testbed-bound: CPU steal 12.4 %",
		"> **no data** — skipped: --skip rotate"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("qa.md lacks %q", s)
		}
	}
	sat := string(md)[strings.Index(string(md), "## Saturation point"):strings.Index(string(md), "## Steady test")]
	if strings.Contains(sat, "last block with a run tx") || strings.Contains(sat, "### candidate") {
		t.Error("qa.md describes the busy span's old end, or a candidate search that did not run")
	}
}

func TestQAJUnit(t *testing.T) {
	data, err := QAJUnit(qaDir(t, "qa1"))
	if err != nil {
		t.Fatal(err)
	}
	var got JUnitSuites
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, data)
	}
	if len(got.Suites) != 1 {
		t.Fatalf("suites: %d", len(got.Suites))
	}
	byName := map[string]JUnitCase{}
	for _, c := range got.Suites[0].Cases {
		byName[c.Classname+"/"+c.Name] = c
	}
	// Steady tps regressed: a failure; latency_p95 inconclusive: skipped;
	// the saturation inconclusive: skipped; LE not judged: absent.
	if c := byName["qa.steady/tps"]; c.Failure == nil || c.Skipped != nil || !strings.Contains(c.Failure.Text, "-40.00 %") {
		t.Errorf("tps: %+v", c)
	}
	if c := byName["qa.steady/latency_p95"]; c.Skipped == nil || c.Failure != nil {
		t.Errorf("latency_p95: %+v", c)
	}
	if c := byName["qa.saturation/saturation_rate"]; c.Skipped == nil {
		t.Errorf("saturation: %+v", c)
	}
	if c := byName["qa.rotating/catch_up"]; c.Skipped == nil {
		t.Errorf("rotating: %+v", c)
	}
	for k := range byName {
		if strings.HasPrefix(k, "qa.latency_emulation/") {
			t.Errorf("an unjudged LE verdict became a testcase: %s", k)
		}
	}
	if got.Tests != 4 || got.Failures != 1 || got.Skipped != 3 || got.Suites[0].Failures != 1 {
		t.Errorf("counts: tests %d failures %d skipped %d", got.Tests, got.Failures, got.Skipped)
	}
}

func TestShareAxes(t *testing.T) {
	a, b, empty := plot.New(), plot.New(), plot.New()
	a.X.Min, a.X.Max, a.Y.Min, a.Y.Max = 0, 60, 0, 100
	b.X.Min, b.X.Max, b.Y.Min, b.Y.Max = 5, 70, 10, 400
	shareAxes([]*plot.Plot{a, empty, b})
	for _, p := range []*plot.Plot{a, b} {
		if p.X.Min != 0 || p.X.Max != 70 || p.Y.Min != 0 || p.Y.Max != 400 {
			t.Errorf("axes x [%g, %g] y [%g, %g], want the union x [0, 70] y [0, 400]", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
		}
	}
	if empty.X.Min <= empty.X.Max || empty.Y.Min <= empty.Y.Max {
		t.Error("a panel with no data was given axes")
	}
}

// TestQARunMedian: the side-by-side panel of a build is its run with the
// median H+1 latency p50, not the first repeat; failed runs and other
// builds' runs do not count.
func TestQARunMedian(t *testing.T) {
	root := t.TempDir()
	idx := &rundir.CompareIndex{}
	for i, p50 := range []float64{1300, 700, 900} {
		name := fmt.Sprintf("b%d", i+1)
		src := copyDir(t, chainRun)
		if err := os.Rename(src, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
		d := &rundir.Dir{Path: filepath.Join(root, name)}
		res, err := d.ReadResults()
		if err != nil {
			t.Fatal(err)
		}
		res.Latency.P50 = p50
		if err := d.WriteResults(res); err != nil {
			t.Fatal(err)
		}
		idx.Runs = append(idx.Runs, rundir.CompareRun{Variant: rundir.QABaseline, Repeat: i + 1, Status: rundir.RunDone, RunDir: name})
	}
	idx.Runs = append(idx.Runs,
		rundir.CompareRun{Variant: rundir.QABaseline, Repeat: 4, Status: "failed", RunDir: "b1"},
		rundir.CompareRun{Variant: rundir.QACandidate, Repeat: 1, Status: rundir.RunDone, RunDir: "b2"})
	var kind Kind
	r, which := qaRun(&qaCmp{CompareIndex: idx, dir: root}, rundir.QABaseline, &kind)
	if r == nil || which != "repeat 3 of 3" || len(kind.SideBySide) == 0 {
		t.Fatalf("median run: %v %q", r != nil, which)
	}
	if r, which := qaRun(&qaCmp{CompareIndex: idx, dir: root}, "nobody", &kind); r != nil || which != "" {
		t.Errorf("a build without runs: %v %q", r != nil, which)
	}
}
