package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/history/historytest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestMain points the history at a temporary database: no test of this
// package writes the user's (every command that finishes records into
// it, and runBinary's children inherit the variable).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "benchnet-history-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(history.EnvPath, filepath.Join(dir, "history.db"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// execCLI runs the CLI in-process with its output captured.
func execCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return exitCode(ctx, err), out.String(), errb.String()
}

func linesWith(s, prefix string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestHistoryCLIAdd: `history add` prints one line per record, adds a
// directory once however often it is given, refuses an unfinished one
// with exit 2 naming it, and `history` lists the series.
func TestHistoryCLIAdd(t *testing.T) {
	tmp := t.TempDir()
	db := filepath.Join(tmp, "h.db")
	run1, cmp, unfinished := filepath.Join(tmp, "run"), filepath.Join(tmp, "cmp"), filepath.Join(tmp, "unfinished")
	historytest.Run(t, run1, "cometbft@v1.0.1", 5.5)
	historytest.Compare(t, cmp, true, historytest.Variant{Name: "old", Release: "cometbft@v0.38.17", TPS: []float64{5, 6}},
		historytest.Variant{Name: "new", Release: "cometbft@v1.0.1", TPS: []float64{7, 8}})
	historytest.Run(t, unfinished, "cometbft@v1.0.1", 5)
	os.Remove(filepath.Join(unfinished, rundir.ResultsFile))

	code, out, errs := execCLI(t, "history", "add", run1, cmp, "--history", db)
	if code != exitOK || linesWith(out, "added") != 3 {
		t.Fatalf("first add: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = execCLI(t, "history", "add", "--history", db, cmp, run1)
	if code != exitOK || linesWith(out, "skipped") != 3 || linesWith(out, "added") != 0 {
		t.Errorf("second add: exit %d\n%s", code, out)
	}
	code, _, errs = execCLI(t, "history", "add", "--history", db, unfinished)
	if code != exitUsage || !strings.Contains(errs, unfinished+" is not finished: results.json") {
		t.Errorf("unfinished: exit %d: %s", code, errs)
	}
	if code, _, _ := execCLI(t, "history", "add", "--history", db); code != exitUsage {
		t.Errorf("add without a directory: exit %d, want %d", code, exitUsage)
	}

	// One series: the run and the compare ran the same testbed on the same
	// machine, on two builds, in three records; `history` draws it.
	code, out, errs = execCLI(t, "history", "--history", db, "-o", filepath.Join(tmp, "out"))
	if code != exitOK {
		t.Fatalf("history: exit %d %s", code, errs)
	}
	if !strings.Contains(out, "series quickstart · testbed ") || !strings.Contains(out, "machine b52e7db65403") || !strings.Contains(out, ": 2 builds, 3 records") {
		t.Fatalf("history view:\n%s", out)
	}
	if code, out, _ := execCLI(t, "history", "--history", filepath.Join(tmp, "none.db")); code != exitOK || !strings.Contains(out, "no history database") {
		t.Errorf("no database: exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "none.db")); err == nil {
		t.Error("listing a missing database created it")
	}
}

// TestHistoryRecordedByCompare: a command that finishes records its
// directory in --history's database, in $BENCHNET_HISTORY's without it,
// and nowhere with --no-history.
func TestHistoryRecordedByCompare(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	historytest.Run(t, a, "cometbft@v0.38.17", 5)
	historytest.Run(t, b, "cometbft@v1.0.1", 6)
	db, off := filepath.Join(tmp, "h.db"), filepath.Join(tmp, "off.db")
	count := func(path string) int {
		t.Helper()
		s, err := history.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		recs, err := s.Records(context.Background(), history.Query{})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	code, _, errs := execCLI(t, "compare", a, b, "--output", filepath.Join(tmp, "out"), "--history", db)
	if code != exitOK || !strings.Contains(errs, "history: 2 record(s) of ") {
		t.Fatalf("compare: exit %d\n%s", code, errs)
	}
	if n := count(db); n != 2 {
		t.Errorf("--history got %d records, want 2 (one per variant)", n)
	}
	code, _, errs = execCLI(t, "compare", a, b, "--output", filepath.Join(tmp, "out"), "--history", off, "--no-history")
	if code != exitOK || strings.Contains(errs, "history:") {
		t.Fatalf("compare --no-history: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(off); err == nil {
		t.Error("--no-history created the database")
	}
	before := count(history.DefaultPath())
	if code, _, errs := execCLI(t, "compare", a, b, "--output", filepath.Join(tmp, "out")); code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, errs)
	}
	if n := count(history.DefaultPath()); n != before+2 {
		t.Errorf("$%s has %d records after a compare, want %d", history.EnvPath, n, before+2)
	}
}

// storeRecords adds synthetic records of scenario to the database at
// path: each build's tps by repeat, on machine m.
func storeRecords(t *testing.T, path, scenario string, m history.Machine, source string, tps map[string][]float64) {
	t.Helper()
	s, err := history.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for rel, xs := range tps {
		r := &history.Record{Source: source, Part: "variant " + rel, Kind: "compare", Scenario: scenario, NodeKind: "cometbft",
			TestbedHash: "00112233445566ff", Load: history.Load{Rate: 200, Connections: 2, DurationSec: 90}, Machine: m,
			Builds:  []history.Build{{Release: rel, Program: "cometbft", Reference: rel, Kind: "tag"}},
			Started: "2026-11-20T10:00:00Z"}
		for i, x := range xs {
			r.Runs = append(r.Runs, history.Run{Repeat: i + 1, Valid: true, Values: map[string]float64{"tps": x}})
		}
		if _, _, err := s.Add(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryCLIView: `history` lists several series and asks for
// --scenario; refuses a scenario of two machines without --machine,
// naming both; draws the chosen series (summary with the change point,
// the report directory, --csv's rows); and names the flag of a bad value.
func TestHistoryCLIView(t *testing.T) {
	tmp := t.TempDir()
	db, out := filepath.Join(tmp, "h.db"), filepath.Join(tmp, "out")
	epyc := history.Machine{CPUModel: "EPYC", CPUs: 2, Kernel: "6.1", MemoryMB: 8000}
	xeon := history.Machine{CPUModel: "Xeon", CPUs: 8, Kernel: "6.1", MemoryMB: 32000}
	storeRecords(t, db, "quickstart", epyc, "/runs/a-compare", map[string][]float64{
		"cometbft@v0.37.15": {500, 505, 498, 502, 499}, "cometbft@v0.38.17": {501, 497, 503, 500, 504}, "cometbft@v1.0.1": {380, 376, 378, 381, 377}})
	storeRecords(t, db, "quickstart", xeon, "/runs/b-compare", map[string][]float64{"cometbft@v1.0.1": {900, 910}, "cometbft@v0.38.17": {950, 940}})

	code, stdout, errs := execCLI(t, "history", "--history", db, "-o", out, "--scenario", "quickstart")
	if code != exitUsage || !strings.Contains(errs, "scenario quickstart was recorded on 2 machines") ||
		!strings.Contains(errs, epyc.Key()+" (EPYC × 2, 3 records)") || !strings.Contains(errs, xeon.Key()+" (Xeon × 8, 2 records)") ||
		!strings.Contains(stdout, "SCENARIO") || linesWith(stdout, "quickstart") != 2 {
		t.Fatalf("two machines: exit %d\n%s%s", code, stdout, errs)
	}
	csvPath := filepath.Join(tmp, "h.csv")
	code, stdout, errs = execCLI(t, "history", "--history", db, "-o", out, "--scenario", "quickstart", "--machine", epyc.Key()[:6], "--csv", csvPath)
	if code != exitOK {
		t.Fatalf("view: exit %d\n%s%s", code, stdout, errs)
	}
	for _, want := range []string{
		"committed TPS (tx/s): cometbft@v0.37.15 501 (5) · cometbft@v0.38.17 501 (5) · cometbft@v1.0.1 378 (5)",
		"    change point cometbft@v0.38.17 → cometbft@v1.0.1: ×0.755 [",
		"report: " + out,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("view output lacks %q:\n%s", want, stdout)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-history-quickstart", "history.md"))
	if len(dirs) != 1 {
		t.Errorf("history directories %q, want one with history.md", dirs)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(b)), "\n"); len(rows) != 16 || !strings.HasPrefix(rows[1], `"2 connection(s) × 200 tx/s, 1m30s",1,cometbft@v0.37.15,1,tps,500,,true,/runs/a-compare,variant cometbft@v0.37.15,2026-11-20T10:00:00Z,`) {
		t.Errorf("csv: %d rows, want 16:\n%s", len(rows), b)
	}

	storeRecords(t, db, "other", epyc, "/runs/c-compare", map[string][]float64{"cometbft@v1.0.1": {1}})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "choose one with --scenario NAME"},
		{[]string{"--scenario", "nope"}, "no series matches --scenario nope"},
		{[]string{"--scenario", "quickstart", "--machine", epyc.Key(), "--metric", "tsp"}, `--metric: unknown metric "tsp"`},
		{[]string{"--scenario", "quickstart", "--machine", epyc.Key(), "--order", "cometbft@v9"}, `--order: "cometbft@v9" names no build`},
		{[]string{"--scenario", "quickstart", "--machine", epyc.Key(), "--csv", filepath.Join(tmp, "no", "dir", "h.csv")}, "--csv " + filepath.Join(tmp, "no", "dir", "h.csv")},
		{[]string{"--nope"}, "unknown flag: --nope"},
	} {
		code, _, errs := execCLI(t, append([]string{"history", "--history", db, "-o", out}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("history %q: exit %d, want %d with %q:\n%s", tc.args, code, exitUsage, tc.want, errs)
		}
	}
}
