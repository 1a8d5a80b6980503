package testnet

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

// TestUnprivilegedUnder0700: with --output under a 0700 directory (what
// t.TempDir and `mktemp -d` make), the node still runs as nobody, through
// the run directory's bind mount, and Down removes the mount (issue 35,
// item 9).
func TestUnprivilegedUnder0700(t *testing.T) {
	needRelease(t, "v1.0.1")
	out := t.TempDir()
	if unreachableByOthers(out) == "" {
		t.Fatalf("t.TempDir() %s is reachable by other users, want one under a 0700 directory", out)
	}
	m, err := manifest.Parse("reach.toml", []byte("name = \"reach\"\n[network]\nsubnet = \"10.213.162.0/24\"\n[node.validator]\ncount = 1\nrelease = \"cometbft@v1.0.1\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log strings.Builder
	tn, err := Up(ctx, m, Options{Output: out, ReadyTimeout: 60 * time.Second, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Down(context.Background()) })
	mp := reachPath(tn.RunID)
	if tn.reachMount != mp || !strings.Contains(log.String(), "through the bind mount "+mp) {
		t.Errorf("reach %q, want the bind mount %s, said in the log", tn.reachMount, mp)
	}
	if _, err := os.Stat(mp + "/plan.json"); err != nil {
		t.Errorf("the run directory is not reached through %s: %v", mp, err)
	}
	for name, pid := range tn.PIDs() {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(status), "\nUid:\t65534\t") {
			t.Errorf("%s (pid %d) does not run as nobody:\n%s", name, pid, status)
		}
	}
	if err := tn.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := os.Stat(mp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after down, %s: %v, want it gone", mp, err)
	}
	if _, err := os.Stat(tn.Dir.Join("homes", "validator0", "config", "genesis.json")); err != nil {
		t.Errorf("the homes are not in the run directory: %v", err)
	}
	if err := ReleaseReach(tn.RunID); err != nil {
		t.Errorf("a second release: %v", err)
	}
}
