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

	code, out, errs = execCLI(t, "history", "--history", db)
	if code != exitOK {
		t.Fatalf("history: exit %d %s", code, errs)
	}
	// One series: the run and the compare ran the same testbed on the same
	// machine, on two builds, in three records.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "SCENARIO") || !strings.Contains(lines[2], "b52e7db65403") {
		t.Fatalf("history listing:\n%s", out)
	}
	if f := strings.Fields(lines[2]); f[0] != "quickstart" || f[len(f)-4] != "2" || f[len(f)-3] != "3" {
		t.Errorf("series row %q: want quickstart, 2 builds, 3 records", lines[2])
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
