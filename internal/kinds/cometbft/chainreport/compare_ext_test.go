package chainreport_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/benchnet/benchnet/internal/kinds" // the figures and metric tables experiment judges with

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/chainreport"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// compareFixture makes a compare directory of two copies of run1 (an A/A
// pair, judged over blocks) with relative run paths, so its report is the
// same wherever the test runs.
func compareFixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "cmp")
	for _, v := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(root, "runs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", "testdata/run1", filepath.Join(root, "runs", v)).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	cfg := experiment.DefaultCompare()
	idx := &rundir.CompareIndex{SchemaVersion: rundir.CompareSchema, Kind: "compare", Name: "fixture", Source: "manifest",
		Base: "a", Variants: []string{"a", "b"}, Labels: map[string]string{"a": "(the manifest)", "b": "validator.app=kvstore-socket"},
		Config: rundir.CompareConfig(*cfg), Seed: experiment.CompareSeed, Rule: experiment.RuleText(cfg.Threshold), Complete: true,
		Runs: []rundir.CompareRun{{Order: 1, Variant: "a", Repeat: 1, Status: rundir.RunDone, RunDir: "runs/a"},
			{Order: 2, Variant: "b", Repeat: 1, Status: rundir.RunDone, RunDir: "runs/b"}}}
	if err := experiment.JudgeCompare(root, idx); err != nil {
		t.Fatal(err)
	}
	if err := experiment.WriteCompareIndex(root, idx); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRenderCompare(t *testing.T) {
	root := compareFixture(t)
	files, err := report.RenderCompare(root)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := rundir.CompareRecord.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	figs := len(chainreport.Compare(idx).Figures())
	if len(files) != 2+figs || figs != 4 {
		t.Errorf("wrote %v, want compare.md, compare.html and %d plots (4: no sweep plot)", files, figs)
	}
	md, _ := os.ReadFile(filepath.Join(root, report.CompareMarkdownFile))
	// The verdict table comes first.
	if i, j := bytes.Index(md, []byte("## Verdicts")), bytes.Index(md, []byte("## Variants")); i < 0 || j < i || i > 200 {
		t.Errorf("verdicts are not the top of compare.md:\n%s", md)
	}
	// The Initia table: a Config label per variant, vs base on P95 and P99.
	for _, want := range []string{
		"| Config | variant | runs | TPS | vs base | P50 (ms) | vs base | P95 (ms) | vs base | P99 (ms) | vs base | peak mempool | vs base |",
		"| validator.app=kvstore-socket | b | 1 | 5.5 | +0.0% | 833 | +0.0% | 1167 | +0.0% | 1167 | +0.0% |",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
	golden := filepath.Join("testdata", "cmp1.compare.md")
	testenv.Golden(t, golden, md)
	// Re-rendering gives the same bytes, plots included.
	testenv.SameOnRerender(t, files, func() error { _, err := report.RenderCompare(root); return err })
	html, _ := os.ReadFile(filepath.Join(root, report.CompareHTMLFile))
	if !strings.Contains(string(html), "data:image/png;base64,") || strings.Count(string(html), "<img") != figs {
		t.Errorf("compare.html does not embed the %d plots", figs)
	}
}

func TestRenderCompareMissingRun(t *testing.T) {
	root := compareFixture(t)
	if err := os.RemoveAll(filepath.Join(root, "runs", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := report.RenderCompare(root); err != nil {
		t.Fatalf("a missing run directory must not stop the report: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(root, report.CompareMarkdownFile))
	if !strings.Contains(string(md), "Problems reading the run directories") {
		t.Errorf("the missing run is not listed:\n%s", md)
	}
}
