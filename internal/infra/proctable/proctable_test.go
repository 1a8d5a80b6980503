package proctable

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/plan"
)

func TestIdentity(t *testing.T) {
	st, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(os.Getpid(), st) || !Running(os.Getpid()) {
		t.Fatal("this process is not alive by its own start time")
	}
	if Alive(os.Getpid(), st+1) {
		t.Error("a different start time counts as the same process")
	}
	if WaitGone(context.Background(), os.Getpid(), st, 50*time.Millisecond) {
		t.Error("WaitGone says this process ended")
	}
	if Alive(0, st) || Running(-1) {
		t.Error("pid 0 / -1 counts as alive")
	}
}

func TestRegistry(t *testing.T) {
	t.Setenv(RuntimeDirEnv, t.TempDir())
	dir := t.TempDir()
	b, a := filepath.Join(dir, "b.json"), filepath.Join(dir, "a.json")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Register("00000b", b); err != nil {
		t.Fatal(err)
	}
	if err := Register("00000a", a); err != nil {
		t.Fatal(err)
	}
	if err := Register("00000c", filepath.Join(dir, "gone.json")); err != nil {
		t.Fatal(err)
	}
	got, err := ActiveRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("ActiveRuns = %v, want [%s %s] (sorted by id, gone state file dropped)", got, a, b)
	}
	if _, err := os.Stat(filepath.Join(ActiveDir(), "00000c")); err == nil {
		t.Error("entry of a gone state file kept")
	}
	if err := Unregister("00000a"); err != nil {
		t.Fatal(err)
	}
	if err := Unregister("00000a"); err != nil {
		t.Errorf("second Unregister: %v", err)
	}
	if got, _ := ActiveRuns(); len(got) != 1 || got[0] != b {
		t.Errorf("after Unregister: %v", got)
	}
}

func TestClaimSetup(t *testing.T) {
	var mu sync.Mutex
	var planned *plan.Testnet
	p := &plan.Testnet{}
	if err := ClaimSetup("XYZ", &mu, &planned, p); err == nil {
		t.Error("bad run id accepted")
	}
	if err := ClaimSetup("abc123", &mu, &planned, p); err != nil || planned != p {
		t.Fatalf("first claim: %v", err)
	}
	if err := ClaimSetup("abc123", &mu, &planned, p); err == nil {
		t.Error("second Setup accepted")
	}
}
