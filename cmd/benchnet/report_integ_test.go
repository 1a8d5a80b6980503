package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// quickstartVariant writes examples/quickstart.toml with its own subnet and
// a shorter load, so the test neither collides with another testnet nor
// takes a minute of load.
func quickstartVariant(t *testing.T, subnet, duration string) string {
	t.Helper()
	return exampleVariant(t, "quickstart.toml", map[string]string{`"10.213.0.0/24"`: `"` + subnet + `"`, `duration = "60s"`: `duration = "` + duration + `"`})
}

// exampleVariant writes examples/name with each old text replaced by its
// new one (each must be there: the test says when the example changed)
// into a temporary file and returns its path.
func exampleVariant(t *testing.T, name string, replace map[string]string) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for old, new := range replace {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s has no %s any more: update the test", name, old)
		}
		data = bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func onlyRunDir(t *testing.T, out string) string {
	t.Helper()
	return onlyRunDirOf(t, out, "quickstart")
}

// onlyRunDirOf is the one run directory of the manifest named name in out.
func onlyRunDirOf(t testing.TB, out, name string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*-"+name))
	if len(dirs) != 1 {
		t.Fatalf("want one run directory in %s, got %v", out, dirs)
	}
	return dirs[0]
}

// reportFiles reads report.md, report.html and every plot of dir.
func reportFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	names := []string{report.MarkdownFile, report.HTMLFile}
	plots, _ := filepath.Glob(filepath.Join(dir, page.PlotsDir, "*.png"))
	for _, p := range plots {
		names = append(names, filepath.Join(page.PlotsDir, filepath.Base(p)))
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

// TestRunThenReportIdentical: the report a run writes is a pure function of
// the finished run directory: `benchnet report DIR`, twice, writes the same
// report.md, report.html and plots byte for byte.
func TestRunThenReportIdentical(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.220.0/24", "8s")
	cmd := exec.Command(bin, "run", m, "--output", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("benchnet run: %v\n%s", err, b)
	}
	dir := onlyRunDir(t, out)
	ran := reportFiles(t, dir)
	if len(ran) < 3 {
		t.Fatalf("the run wrote %d report files", len(ran))
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !bytes.Contains(events, []byte(`"testnet_down"`)) {
		t.Fatalf("no testnet_down event: the test would not see a late event:\n%s", events)
	}
	for i := 1; i <= 2; i++ {
		if b, err := exec.Command(bin, "report", dir).CombinedOutput(); err != nil {
			t.Fatalf("benchnet report #%d: %v\n%s", i, err, b)
		}
		again := reportFiles(t, dir)
		if len(again) != len(ran) {
			t.Errorf("report #%d wrote %d files, the run %d", i, len(again), len(ran))
		}
		for name, want := range ran {
			if !bytes.Equal(again[name], want) {
				t.Errorf("report #%d: %s differs from the run's (%d vs %d bytes)", i, name, len(again[name]), len(want))
			}
		}
	}
}

// TestKill9RunThenAnalyze: `benchnet run` killed with SIGKILL during its
// load, then `benchnet down`: `benchnet analyze` recovers the accounting from
// the nodes' stores and the report says it was recovered.
func TestKill9RunThenAnalyze(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.221.0/24", "60s")
	run := exec.Command(bin, "run", m, "--output", out)
	var log bytes.Buffer
	run.Stdout, run.Stderr = &log, &log
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	t.Cleanup(func() {
		if dir != "" {
			_ = exec.Command(bin, "down", dir).Run()
		}
	})
	// Kill -9 once a few hundred txs are in sent.csv.
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		if dirs, _ := filepath.Glob(filepath.Join(out, "*-quickstart")); len(dirs) == 1 {
			dir = dirs[0]
			if countLines(filepath.Join(dir, rundir.SentCSV.Name)) > 600 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if dir == "" || countLines(filepath.Join(dir, rundir.SentCSV.Name)) <= 600 {
		_ = run.Process.Kill()
		_ = run.Wait()
		t.Fatalf("the load did not start within 120 s:\n%s", log.String())
	}
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultsFile)); err == nil {
		t.Fatal("results.json exists after kill -9 during the load: the test proves nothing")
	}

	// Before analyze, the report points at it; analyze refuses a live run.
	if b, err := exec.Command(bin, "report", dir).CombinedOutput(); err != nil {
		t.Fatalf("report before analyze: %v\n%s", err, b)
	}
	if md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile)); !bytes.Contains(md, []byte("benchnet analyze")) {
		t.Errorf("report of an unanalyzed run does not point to benchnet analyze:\n%.600s", md)
	}
	b, err := exec.Command(bin, "analyze", dir).CombinedOutput()
	if code := exitOf(err); code != exitUsage || !strings.Contains(string(b), "benchnet down") {
		t.Errorf("analyze of a live run: exit %d, want %d and a hint to down:\n%s", code, exitUsage, b)
	}

	if b, err := exec.Command(bin, "down", dir).CombinedOutput(); err != nil {
		t.Fatalf("benchnet down: %v\n%s", err, b)
	}
	b, err = exec.Command(bin, "analyze", dir).CombinedOutput()
	t.Logf("benchnet analyze:\n%s", b)
	if err != nil {
		t.Fatalf("benchnet analyze: %v", err)
	}
	var res rundir.Results
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Sent < 600 || a.Committed < a.Sent/2 {
		t.Errorf("accounting %+v: want the ~%d txs sent before the kill, most committed", a, countLines(filepath.Join(dir, rundir.SentCSV.Name)))
	}
	if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
		t.Errorf("accounting identity broken: %+v", a)
	}
	// The range starts low enough: the first txs, sent seconds before the
	// kill, are all found in the store.
	if early := earlyNotCommitted(t, filepath.Join(dir, rundir.TxsCSV.Name), 100); len(early) > 0 {
		t.Errorf("of the first 100 txs, %d are not committed (the harvest range starts too high?): %v", len(early), early)
	}
	if res.Recovered == nil || res.Recovered.Method != "cometbft inspect" || !strings.HasPrefix(res.Recovered.Node, "validator") {
		t.Errorf("results.json not marked recovered: %+v", res.Recovered)
	}
	if !strings.Contains(string(b), "recovered") {
		t.Error("analyze's summary does not say recovered")
	}
	if b, err := exec.Command(bin, "report", dir).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	head, _, _ := bytes.Cut(md, []byte("## Plots"))
	for _, want := range []string{"RECOVERED", "pending: holds"} {
		if !bytes.Contains(head, []byte(want)) {
			t.Errorf("report headline lacks %q:\n%s", want, head)
		}
	}
	if bytes.Contains(md, []byte("run `benchnet analyze`")) {
		t.Error("the analyzed report still asks to run benchnet analyze")
	}
}

// earlyNotCommitted lists the seqs below n whose state in txs.csv is not
// committed.
func earlyNotCommitted(t *testing.T, path string, n int) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("txs.csv: %v (%d rows)", err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var out []string
	for _, r := range recs[1:] {
		if seq, _ := strconv.Atoi(r[col["seq"]]); seq < n && r[col["state"]] != rundir.StateCommitted {
			out = append(out, r[col["seq"]]+":"+r[col["state"]])
		}
	}
	return out
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
	}
	return n
}

func exitOf(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
