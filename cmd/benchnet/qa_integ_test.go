package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// qaTestBudget bounds the integration QAs: one hold of the machine-wide
// lock is at most ~12 minutes (the quick profile's plan is ~15 min here,
// so the tests shorten it further and leave out latency emulation, whose
// runs are the steady test's with zones).
const qaTestBudget = 10 * time.Minute

// qaTestManifests writes examples/qa.toml and qa-rotate.toml with their own
// subnets and the test's profile: --quick shortened further (the quick
// profile's plan is ~12 minutes here), plus extra [qa] keys. Its 3-probe
// search ends at 800 tx/s here (200, 800, then 3000 saturated), well below
// the chain's ~1450, so the pairs run at 2.5 x that: at 1.2 x the baseline
// kept up, and the pairs were raised twice (960, 1440, 2160 tx/s: 4 runs
// thrown away in each QA, CI 2026-11-30).
func qaTestManifests(t *testing.T, subnet, rotSubnet string, extra string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct{ name, old, new, qa string }{
		{"qa.toml", `"10.213.21.0/24"`, `"` + subnet + `"`, "probe_duration = \"6s\"\nsearch_budget = 3\nprecision = 0.5\nduration = \"10s\"\nrepeats = 2\nmax_repeats = 2\n" +
			"latency_emulation = false\ncycles = 2\nrotate_duration = \"20s\"\nmin_pairs = 3\nmax_pairs = 4\npair_duration = \"6s\"\noverload = 2.5\n" + extra},
		{"qa-rotate.toml", `"10.213.22.0/24"`, `"` + rotSubnet + `"`, ""},
	} {
		data, err := os.ReadFile("../../examples/" + f.name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(f.old)) {
			t.Fatalf("%s has no %s any more: update the test", f.name, f.old)
		}
		data = bytes.Replace(data, []byte(f.old), []byte(f.new), 1)
		if f.qa != "" {
			// A key the test sets replaces the example's, and a key in
			// extra replaces the test profile's.
			keys := map[string]string{}
			var order []string
			for _, line := range strings.Split(strings.TrimSpace(f.qa), "\n") {
				key, _, _ := strings.Cut(line, " =")
				if _, ok := keys[key]; !ok {
					order = append(order, key)
				}
				keys[key] = line
				data = regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(key)+` = .*\n`).ReplaceAll(data, nil)
			}
			var qa strings.Builder
			for _, key := range order {
				qa.WriteString(keys[key] + "\n")
			}
			data = bytes.Replace(data, []byte("\n[qa]\n"), []byte("\n[qa]\n"+qa.String()), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "qa.toml")
}

// runQABinary runs `benchnet qa` and returns its exit code, output, the QA
// directory's index and the wall time.
// stealAttempts bounds retryStolen: a measurement is run at most this
// many times.
const stealAttempts = 2

// retryStolen runs a real-node measurement (attempt from 1) and runs it
// again when it did not give the answer its test wants and its output
// says the hypervisor's steal bound a run (analyze.StealWhy): the tool was
// right to call such a run invalid, and the test asks about something
// else (CI, 2026-11-29: steal episodes of 7-13 % failed three tests in
// one run). Any other failure, and the last attempt's, is the test's.
func retryStolen(t *testing.T, run func(attempt int) (output string, ok bool)) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, ok := run(attempt)
		if ok || attempt == stealAttempts || !strings.Contains(out, analyze.StealWhy) {
			return
		}
		t.Logf("attempt %d bound by CPU steal (%q in its output): running it again", attempt, analyze.StealWhy)
	}
}

func runQABinary(t *testing.T, out string, args ...string) (int, string, *rundir.QAIndex, time.Duration) {
	t.Helper()
	b, wall, err := runLong(t, qaTestBudget+time.Minute, append([]string{"qa", "-o", out}, args...)...)
	code := exitOf(err)
	dirs, _ := filepath.Glob(filepath.Join(out, "*-qa"))
	if len(dirs) != 1 {
		t.Fatalf("want one QA directory in %s, got %v", out, dirs)
	}
	x, err := rundir.QARecord.Read(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	return code, b, x, wall
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The same release as baseline and candidate: Pass or Inconclusive, never
// Fail, within the budget; the report, the JUnit file and the exit code
// agree with qa.json.
func TestQAQuickSameRelease(t *testing.T) {
	testenv.NeedRoot(t) // a QA on real nodes: about 10 minutes
	m := qaTestManifests(t, "10.213.241.0/24", "10.213.242.0/24", "")
	out := testenv.OutputDir(t)
	junit := filepath.Join(t.TempDir(), "qa.xml")
	code, text, x, wall := runQABinary(t, out, "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--quick",
		"--budget", qaTestBudget.String(), "--junit", junit, m)
	if x.Overall == judge.ResultFail || code == exitThreshold {
		t.Errorf("A/A QA failed: %+v", x.Results)
	}
	if want := judge.ExitCodeOf(x.Overall); code != want || !x.Complete {
		t.Errorf("exit %d, want %d for %s; complete %v; steps %+v", code, want, x.Overall, x.Complete, x.Steps)
	}
	if wall > qaTestBudget+time.Minute {
		t.Errorf("wall time %s: past the %s budget", wall.Round(time.Second), qaTestBudget)
	}
	if !strings.Contains(text, "qa plan:") || !strings.Contains(text, "Test Results") {
		t.Error("the plan or the Test Results were not printed")
	}
	dir := filepath.Dir(filepath.Join(out, "x"))
	dirs, _ := filepath.Glob(filepath.Join(dir, "*-qa"))
	md, err := os.ReadFile(filepath.Join(dirs[0], report.QAMarkdownFile))
	if err != nil || !bytes.Contains(md, []byte("## Test Results")) {
		t.Errorf("qa.md: %v", err)
	}
	// Re-rendered from the directory alone: the same bytes.
	if _, err := report.RenderQA(dirs[0]); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dirs[0], report.QAMarkdownFile)); !bytes.Equal(md, again) {
		t.Error("qa.md changed on re-render")
	}
	data, err := os.ReadFile(junit)
	var suites report.JUnitSuites
	if err != nil || xml.Unmarshal(data, &suites) != nil || suites.Tests == 0 || suites.Failures != 0 {
		t.Errorf("junit: %v, %+v", err, suites)
	}
	// Node homes went as steps finished.
	homes, _ := filepath.Glob(filepath.Join(dirs[0], "steps", "*", "*", rundir.Homes))
	more, _ := filepath.Glob(filepath.Join(dirs[0], "steps", "*", "*", "*", rundir.Homes))
	if len(homes)+len(more) > 0 {
		t.Errorf("node homes left: %v %v", homes, more)
	}
}

// A candidate built from a local CometBFT tree that sleeps 2 s before it
// commits every block (patchBlockSleep): the steady test fails (exit 3)
// and names the regressed metrics. (700 ms in block execution was mostly
// hidden behind v1.0.1's 1 s timeout_commit, and the QA said Inconclusive,
// rightly.) The steady test runs 3 rounds: two pairs make a t interval of
// 1 df, 12.7 standard errors wide, which decided only when the two rounds'
// ratios agreed within a few percent, and CI read Inconclusive twice
// (8f4f5cc, 0e1a708: "3 of 4 metrics inconclusive ... 2 repeats"); 3
// pairs make it 4.3 wide. Latency emulation and rotating nodes are left
// out to keep one hold of the lock short; the tree build is part of it.
func TestQARegressionLocalTree(t *testing.T) {
	testenv.NeedRoot(t) // a QA on real nodes: about 10 minutes
	tree := copyCometBFTTree(t, t.TempDir())
	commit := commitTree(t, tree)
	patchBlockSleep(t, tree, 2*time.Second)
	// Two pairs: the saturation step only chooses the steady load here (a
	// 2 s sleep before each commit read "improvement" once and "worse"
	// once: fewer, larger blocks), so it need not decide.
	m := qaTestManifests(t, "10.213.243.0/24", "10.213.244.0/24", "rotate = \"\"\nrepeats = 3\nmax_repeats = 3\nmin_pairs = 2\nmax_pairs = 2\n")
	var exit int
	var text string
	var x *rundir.QAIndex
	var wall time.Duration
	retryStolen(t, func(attempt int) (string, bool) {
		out := filepath.Join(testenv.OutputDir(t), fmt.Sprintf("try%d", attempt))
		exit, text, x, wall = runQABinary(t, out, "--baseline", "cometbft@v1.0.1", "--candidate", tree, "--quick", "--budget", qaTestBudget.String(), m)
		return text, exit == exitThreshold
	})
	if exit != exitThreshold || x.Overall != judge.ResultFail {
		t.Errorf("exit %d, overall %s, want 3 Fail: %+v", exit, x.Overall, x.Results)
	}
	var steady *rundir.QAResult
	for i := range x.Results {
		if x.Results[i].Scenario == "Steady test" {
			steady = &x.Results[i]
		}
	}
	if steady == nil || steady.Result != judge.ResultFail || !regexp.MustCompile(`regression: .*(blocks_per_min|latency_avg|latency_p95|tps)`).MatchString(steady.Why) {
		t.Errorf("steady result %+v does not name the regressed metrics", steady)
	}
	if !strings.Contains(text, "Fail") {
		t.Error("the Test Results printed no Fail")
	}
	if x.Candidate.Commit != commit+"+dirty" {
		t.Errorf("candidate version %q (commit %q), want the tree's commit %s+dirty", x.Candidate.Version(), x.Candidate.Commit, commit)
	}
	t.Logf("regression QA: %s in %s", x.Overall, wall.Round(time.Second))
}
