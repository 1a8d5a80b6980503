package history

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper process: the test binary re-executed with HISTORY_HELPER set
// is a second writer, a real OS process with its own connection.
const helperEnv = "HISTORY_HELPER"

// TestHelperProcess is not a test: it is the child the tests below start.
//
//	HISTORY_HELPER=write  HISTORY_DB HISTORY_PREFIX HISTORY_N HISTORY_GO: wait for HISTORY_GO to exist, add N records
//	HISTORY_HELPER=block  HISTORY_DB HISTORY_PREFIX: add one record, print "in-tx" inside its transaction, then hang
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("the helper process of the concurrency tests")
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("HISTORY_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	prefix := os.Getenv("HISTORY_PREFIX")
	switch mode {
	case "write":
		n, _ := strconv.Atoi(os.Getenv("HISTORY_N"))
		for {
			if _, err := os.Stat(os.Getenv("HISTORY_GO")); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		for i := 0; i < n; i++ {
			if _, _, err := s.Add(ctx, sampleRecord(fmt.Sprintf("%s/%d", prefix, i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
	case "block":
		testHookInTx = func() {
			fmt.Println("in-tx")
			select {} // until killed
		}
		if _, _, err := s.Add(ctx, sampleRecord(prefix)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	os.Exit(0)
}

func helper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	c.Env = append(os.Environ(), env...)
	return c
}

// TestHistoryConcurrentWriters: two processes adding records at the same
// moment both land, every record whole.
func TestHistoryConcurrentWriters(t *testing.T) {
	tmp := t.TempDir()
	db, gate := filepath.Join(tmp, "history.db"), filepath.Join(tmp, "go")
	const n = 25
	var kids []*exec.Cmd
	var outs []*strings.Builder
	for _, p := range []string{"/a", "/b"} {
		c := helper(t, helperEnv+"=write", "HISTORY_DB="+db, "HISTORY_PREFIX="+p, "HISTORY_N="+strconv.Itoa(n), "HISTORY_GO="+gate)
		out := &strings.Builder{}
		c.Stdout, c.Stderr = out, out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		kids, outs = append(kids, c), append(outs, out)
	}
	time.Sleep(200 * time.Millisecond) // both open the database before either writes
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range kids {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	s, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkIntegrity(t, s)
	for _, p := range []string{"/a", "/b"} {
		var recs, runs, values int
		if err := s.db.QueryRow(`SELECT COUNT(*), (SELECT COUNT(*) FROM runs JOIN records r ON r.id = record_id WHERE r.source LIKE ? || '/%'),
			(SELECT COUNT(*) FROM run_values JOIN records r ON r.id = record_id WHERE r.source LIKE ? || '/%')
			FROM records WHERE source LIKE ? || '/%'`, p, p, p).Scan(&recs, &runs, &values); err != nil {
			t.Fatal(err)
		}
		if recs != n || runs != 2*n || values != 3*n {
			t.Errorf("writer %s: %d records, %d runs, %d values; want %d, %d, %d", p, recs, runs, values, n, 2*n, 3*n)
		}
	}
}

// TestHistoryKilledWriter: a writer killed with SIGKILL inside its
// transaction (its rows written, the commit not reached) leaves a readable
// database with the records before it and nothing of its own, and the
// same record can be added afterwards.
func TestHistoryKilledWriter(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Add(ctx, sampleRecord("/before")); err != nil {
		t.Fatal(err)
	}
	s.Close()

	c := helper(t, helperEnv+"=block", "HISTORY_DB="+db, "HISTORY_PREFIX=/killed")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "in-tx" {
				line <- sc.Text()
				return
			}
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			c.Wait()
			t.Fatalf("the writer ended before its commit: %s", stderr.String())
		}
		_ = l
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		t.Fatal("the writer never reached its transaction")
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("writer exit: %v, want killed", err)
	}

	s, err = Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkIntegrity(t, s)
	recs, err := s.Records(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Source != "/before" || len(recs[0].Runs) != 2 {
		t.Fatalf("after the kill: %+v", recs)
	}
	for _, table := range []string{"runs", "run_values", "latency", "builds", "probes", "saturation"} {
		var orphans int
		if err := s.db.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE record_id NOT IN (SELECT id FROM records)`).Scan(&orphans); err != nil || orphans != 0 {
			t.Errorf("%s: %d rows of no record (%v)", table, orphans, err)
		}
	}
	if o, n, err := s.Add(ctx, sampleRecord("/killed")); err != nil || o != Added || n != 2 {
		t.Errorf("adding the killed writer's record again: %v %d %v", o, n, err)
	}
}

func checkIntegrity(t *testing.T, s *Store) {
	t.Helper()
	var ok string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	rows, err := s.db.Query("PRAGMA foreign_key_check")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if rows.Next() {
		t.Error("foreign_key_check found rows that point at nothing")
	}
}
