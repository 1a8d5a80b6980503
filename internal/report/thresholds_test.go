package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestThresholdSection: a run whose results.json holds judged thresholds
// opens its report with them, before the headline; the section is golden
// (testdata/thresholds.section.md), and the re-render is byte-identical.
func TestThresholdSection(t *testing.T) {
	dir := copyDir(t, chainRun)
	d := &rundir.Dir{Path: dir}
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	var conds []judge.Condition
	for _, kv := range [][2]string{{"latency_p99", "< 2s"}, {"tps", "> 1e6"}, {"committed", ">= 99.9%"}, {"caught_up", "== true"}} {
		c, err := judge.ParseCondition("cometbft", kv[0], kv[1])
		if err != nil {
			t.Fatal(err)
		}
		conds = append(conds, c)
	}
	vals := map[string]float64{"latency_p99": res.Latency.P99, "tps": res.TxPerSecond, "committed": 100}
	res.Thresholds = judge.EvalThresholds(conds, vals)
	if err := d.WriteResults(res); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	i, j := strings.Index(s, "## Thresholds"), strings.Index(s, "## Headline")
	if i < 0 || j < 0 || i > j {
		t.Fatalf("thresholds section at %d, headline at %d: want the thresholds first", i, j)
	}
	testenv.Golden(t, "testdata/thresholds.section.md", []byte(s[i:j]))
	for _, want := range []string{"**FAIL**: 2 of 4 thresholds failed", "| `tps` | `> 1e6` |", "| `caught_up` | `== true` | — | **FAIL**: not measured |"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	again := copyDir(t, dir)
	if _, err := Render(again, ""); err != nil {
		t.Fatal(err)
	}
	md2, _ := os.ReadFile(filepath.Join(again, MarkdownFile))
	if string(md2) != s {
		t.Error("re-rendering the run directory changed report.md")
	}
}

// The experiment-level section: one row per run, a harness-invalid cell
// not judged, the verdict counting the judged runs only.
func TestRunsThresholdSection(t *testing.T) {
	mk := func(tps string, harness bool) string {
		dir := copyDir(t, chainRun)
		d := &rundir.Dir{Path: dir}
		res, err := d.ReadResults()
		if err != nil {
			t.Fatal(err)
		}
		c, err := judge.ParseCondition("cometbft", "tps", tps)
		if err != nil {
			t.Fatal(err)
		}
		res.Thresholds = judge.EvalThresholds([]judge.Condition{c}, map[string]float64{"tps": res.TxPerSecond})
		if harness {
			res.GeneratorInvalid = []string{"lag"}
		}
		if err := d.WriteResults(res); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	runs := []thrRun{{"c1", mk("> 5", false)}, {"c2", mk("> 180", false)}, {"c3", mk("> 180", true)}, {"c4", t.TempDir()}}
	md := string(page.Markdown(runsThresholdSection("rule.", runs, true)))
	for _, want := range []string{"**FAIL** (exit 3): 1 of 2 judged runs failed a threshold. rule.", "| c1 | pass | — |",
		"| c2 | **FAIL** | tps > 180: was 5.5 tx/s |", "| c3 | not judged |"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "c4") {
		t.Errorf("a run without thresholds is listed:\n%s", md)
	}
	if runsThresholdSection("rule.", runs[3:], true) != nil {
		t.Error("no run recorded thresholds: want no section")
	}
}
