package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/plan"
)

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

// A subnet held by another benchnet run's bridge names that run and how to
// remove it; any other interface only asks for another subnet.
func TestSubnetHint(t *testing.T) {
	t.Setenv(proctable.RuntimeDirEnv, t.TempDir())
	runDir := t.TempDir()
	state := filepath.Join(runDir, "state.json")
	if err := os.WriteFile(state, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := proctable.Register("89d1c5", state); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ifname, want string }{
		{"bn89d1c5br", "benchnet run 89d1c5 (" + runDir + "), still up: `benchnet down " + runDir + "`"},
		{"bn0badc0br", "benchnet run 0badc0, whose state is gone: `benchnet down --all`"},
		{"bn89d1c5h3", "pick another network.subnet"},
		{"eth0", "pick another network.subnet"},
		{"docker0", "pick another network.subnet"},
	} {
		got := subnetHint(tc.ifname)
		if !strings.Contains(got, tc.want) {
			t.Errorf("subnetHint(%q) = %q, want it to contain %q", tc.ifname, got, tc.want)
		}
		if tc.want != "pick another network.subnet" && !strings.Contains(got, "benchnet run") {
			t.Errorf("subnetHint(%q) = %q names no run", tc.ifname, got)
		}
	}
}
