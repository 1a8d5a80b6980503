package local

import (
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra"
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
