package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// runExit runs cmd and returns its exit code and combined output.
func runExit(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(b)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(b)
	}
	t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	return -1, ""
}

// TestRunThresholds: one short real run of the quickstart with a failing
// threshold (tps above anything this machine commits) and a passing one:
// exit 3, the failing one named on stderr and first in the report, both in
// results.json. Then the failing one is taken out of the run directory's
// manifest copy and `benchnet analyze` re-judges the same run: exit 0, and
// `benchnet report` shows PASS (one run for both outcomes, about 30 s).
func TestRunThresholds(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.214.10.0/24", "10s")
	const failing, passing = `tps = "> 1000000"`, `latency_p99 = "< 60s"`
	f, err := os.OpenFile(m, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n[thresholds]\n" + passing + "\n" + failing + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	code, log := runExit(t, exec.Command(bin, "run", m, "--rate", "50", "--output", out))
	if code != exitThreshold {
		t.Fatalf("benchnet run with a failing threshold: exit %d, want %d\n%s", code, exitThreshold, log)
	}
	if !strings.Contains(log, "threshold failed: tps > 1000000: was ") || strings.Contains(log, "latency_p99 < 60s: was") {
		t.Errorf("stderr should name the failing threshold (tps) and only it:\n%s", log)
	}
	dir := onlyRunDir(t, out)
	d := &rundir.Dir{Path: dir}
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Thresholds) != 2 || res.Thresholds[0].Outcome != judge.ThresholdPass || res.Thresholds[1].Outcome != judge.ThresholdFail ||
		res.Thresholds[1].Actual == nil || *res.Thresholds[1].Actual != res.TxPerSecond {
		t.Errorf("results.json thresholds: %+v (tps %v)", res.Thresholds, res.TxPerSecond)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if i, j := bytes.Index(md, []byte("## Thresholds")), bytes.Index(md, []byte("## Headline")); i < 0 || i > j || !bytes.Contains(md, []byte("**FAIL**: 1 of 2 thresholds")) {
		t.Errorf("report.md does not open with the failed thresholds:\n%.1500s", md)
	}
	// `benchnet report` re-renders the same report from the directory.
	if code, log := runExit(t, exec.Command(bin, "report", dir)); code != 0 {
		t.Fatalf("benchnet report: exit %d\n%s", code, log)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile)); !bytes.Equal(again, md) {
		t.Error("benchnet report changed report.md")
	}

	// The same run judged with the passing threshold only.
	copyPath := d.Join(rundir.Manifest)
	data, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(failing)) {
		t.Fatalf("the run directory's manifest.toml lacks %s:\n%s", failing, data)
	}
	if err := os.WriteFile(copyPath, bytes.Replace(data, []byte(failing), nil, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, log := runExit(t, exec.Command(bin, "analyze", dir)); code != 0 {
		t.Fatalf("benchnet analyze with a passing threshold: exit %d, want 0\n%s", code, log)
	}
	if code, log := runExit(t, exec.Command(bin, "report", dir)); code != 0 {
		t.Fatalf("benchnet report: exit %d\n%s", code, log)
	}
	md, _ = os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !bytes.Contains(md, []byte("**PASS**: all 1 thresholds hold")) {
		t.Errorf("report.md after re-judging:\n%.1500s", md)
	}
}
