package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The container runners' integration tests share these steps: a finished
// run's accounting, and `up` killed with -9 once its nodes run.

// checkAllCommitted reads dir's results.json: something was sent, the
// accounting identity holds and the quickstart's load was all committed.
func checkAllCommitted(t *testing.T, dir string) {
	t.Helper()
	var res struct {
		Accounting struct{ Sent, Committed, Rejected, Lost, Pending int }
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Sent == 0 || a.Committed == 0 {
		t.Fatalf("nothing sent or committed: %+v", a)
	}
	if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
		t.Errorf("accounting identity broken: %+v", a)
	}
	if a.Committed != a.Sent {
		t.Errorf("the quickstart load was not all committed: %+v", a)
	}
}

// upThenKill9 starts `benchnet up m --runner runner`, waits until its 4
// nodes run (state.json lists their pids), kills it with -9 and returns
// the run directory; a cleanup downs it whatever the test found.
func upThenKill9(t *testing.T, bin, m, runner, out string) string {
	t.Helper()
	up := exec.Command(bin, "up", m, "--runner", runner, "--output", out)
	var log bytes.Buffer
	up.Stdout, up.Stderr = &log, &log
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	var runDir string
	t.Cleanup(func() {
		if runDir != "" {
			_ = exec.Command(bin, "down", runDir).Run()
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && len(proctable.NodePIDs(filepath.Join(runDir, rundir.State))) < 4 {
		if dirs, _ := filepath.Glob(filepath.Join(out, "*-quickstart")); len(dirs) == 1 {
			runDir = dirs[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	if runDir == "" || len(proctable.NodePIDs(filepath.Join(runDir, rundir.State))) < 4 {
		_ = up.Process.Kill()
		t.Fatalf("nodes not running within 90s on runner %s:\n%s", runner, log.String())
	}
	if err := up.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = up.Wait()
	return runDir
}

// downLeavesNothing runs `benchnet down runDir` and checks that left (the
// labelled objects of the run) is then empty and the run unregistered.
func downLeavesNothing(t *testing.T, bin, runDir string, left func() []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, bin, "down", runDir).CombinedOutput(); err != nil {
		t.Fatalf("benchnet down: %v\n%s", err, b)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("left after down: %v", l)
	}
	for _, a := range mustActive(t) {
		if strings.HasPrefix(a, runDir) {
			t.Errorf("run still registered as active: %s", a)
		}
	}
}
