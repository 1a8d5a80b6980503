package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// TestLifecycle: Pause stops the whole group (state T), Resume runs it again,
// Stop ends a paused process without waiting for SIGKILL, Kill ends one at
// once and neither is reported on Exited.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	r, p := setup(t, "10.213.243.0/24", 1)
	r.StopTimeout = 3 * time.Second
	ctx := context.Background()
	n := p.Nodes[0].Name
	start := func(name string) int {
		t.Helper()
		pid, err := r.Start(ctx, infra.Process{Node: n, Name: name, Argv: []string{"sleep", "1000"}, LogPath: filepath.Join(t.TempDir(), name+".log")})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	state := func(pid int) byte {
		st, _, err := procStat(pid)
		if err != nil {
			return 0
		}
		return st
	}
	waitState := func(pid int, want byte) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if state(pid) == want {
				return
			}
		}
		t.Fatalf("pid %d in state %q, want %q", pid, state(pid), want)
	}

	pid := start("node")
	if err := r.Pause(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	waitState(pid, 'T')
	if err := r.Resume(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	waitState(pid, 'S')

	// Stop of a paused process: SIGTERM is acted on at once, not after the grace.
	if err := r.Pause(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	waitState(pid, 'T')
	t0 := time.Now()
	if err := r.Stop(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("stop of a paused process took %s (SIGKILL after the grace?)", d)
	}
	if proctable.Running(pid) {
		t.Errorf("pid %d still running after Stop", pid)
	}
	if err := r.Pause(ctx, n, "node"); err == nil {
		t.Error("pause of a stopped process: no error")
	}

	// Kill, then a restart under the same name.
	pid = start("node")
	if err := r.Kill(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	if proctable.Running(pid) {
		t.Errorf("pid %d still running after Kill", pid)
	}
	if err := r.Kill(ctx, n, "node"); err != nil {
		t.Errorf("kill of a dead process: %v", err)
	}
	pid2 := start("node")
	if pid2 == pid || !proctable.Running(pid2) {
		t.Errorf("restart: pid %d (was %d) running=%v", pid2, pid, proctable.Running(pid2))
	}
	if err := r.Kill(ctx, n, "missing"); err == nil {
		t.Error("kill of an unknown process: no error")
	}
	select {
	case ex := <-r.Exited():
		t.Errorf("expected exits reported as unexpected: %+v", ex)
	case <-time.After(100 * time.Millisecond):
	}
}
