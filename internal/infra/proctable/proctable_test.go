package proctable

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
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

// CheckStart is the refusal every runner's Start shares.
func TestCheckStart(t *testing.T) {
	p := &plan.Testnet{Nodes: []*plan.Node{{Name: "validator0"}}}
	ok := infra.Process{Node: "validator0", Name: "node", Argv: []string{"/bin/true"}}
	for _, tc := range []struct {
		name    string
		closing bool
		p       *plan.Testnet
		proc    infra.Process
		wantErr string
	}{
		{name: "ok", p: p, proc: ok},
		{name: "closing", closing: true, p: p, proc: ok, wantErr: "start validator0/node: run abc123 is being cleaned up"},
		{name: "not set up", proc: ok, wantErr: "start validator0/node: run abc123 is not set up"},
		{name: "unknown node", p: p, proc: infra.Process{Node: "full9", Name: "app", Argv: []string{"x"}}, wantErr: `start full9/app: no node "full9" in the plan`},
		{name: "no argv", p: p, proc: infra.Process{Node: "validator0", Name: "node"}, wantErr: "start validator0/node: empty argv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckStart("abc123", tc.closing, tc.p, tc.proc)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// ReportExit reports only unexpected exits and never blocks.
func TestReportExit(t *testing.T) {
	exited := make(chan infra.Exit, 1)
	ex := infra.Exit{Node: "validator0", Name: "node", PID: 7, Status: "exit status 1"}
	ReportExit(exited, ex, true)
	if len(exited) != 0 {
		t.Fatalf("an expected exit was reported: %+v", <-exited)
	}
	ReportExit(exited, ex, false)
	ReportExit(exited, infra.Exit{Node: "validator1"}, false) // buffer full: dropped, not blocking
	if got := <-exited; got != ex {
		t.Errorf("reported %+v, want %+v", got, ex)
	}
	if len(exited) != 0 {
		t.Errorf("%d more reports, want the second dropped", len(exited))
	}
}
