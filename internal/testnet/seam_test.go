package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeKind is a node kind the testnet has never heard of: two helper
// processes started before the node, its own log names, its own reset.
type fakeKind struct {
	resetErr error
	resets   []string // node names, with the bins and env they came with
}

func (f *fakeKind) Binaries(context.Context, *plan.Testnet, io.Writer) ([]node.Binary, error) {
	return nil, nil
}
func (f *fakeKind) Homes(context.Context, *plan.Testnet, []node.Binary, node.Env) error { return nil }
func (f *fakeKind) Processes(n *plan.Node, bins []node.Binary, env node.Env) []infra.Process {
	var out []infra.Process
	for _, name := range []string{"sidecar", "proxy", "node"} {
		out = append(out, infra.Process{Node: n.Name, Name: name, LogPath: env.Dir.Join(rundir.Logs, "fake-"+n.Name+"-"+name+".txt")})
	}
	return out
}
func (f *fakeKind) Reset(ctx context.Context, n *plan.Node, bins []node.Binary, env node.Env) error {
	f.resets = append(f.resets, fmt.Sprintf("%s %s %s", n.Name, bins[0].Path, env.Homes))
	return f.resetErr
}
func (f *fakeKind) Ready(context.Context, *plan.Node) (bool, string) { return true, "" }
func (f *fakeKind) Waiting() string                                  { return "" }

func seamTestnet(t *testing.T, d node.Driver) *Testnet {
	t.Helper()
	dir, err := rundir.Create(t.TempDir(), "seam", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Testnet{Name: "seam", Nodes: []*plan.Node{{Name: "n0"}, {Name: "n1"}}}
	return &Testnet{Plan: p, Dir: dir, Driver: d, bins: []node.Binary{{Program: "x", Path: "/bin/x"}},
		env: node.Env{Dir: dir, Homes: dir.Join(rundir.Homes)}, absent: map[string]bool{}}
}

// The testnet knows a node's processes, their logs and how to wipe it only
// through the driver.
func TestTestnetAsksTheDriver(t *testing.T) {
	f := &fakeKind{}
	tn := seamTestnet(t, f)
	if got, want := tn.processes(tn.Plan.Nodes[1]), []string{"node", "proxy", "sidecar"}; !slices.Equal(got, want) {
		t.Errorf("processes = %q, want %q (node first, the reverse of the start order)", got, want)
	}
	for _, tc := range []struct{ node, proc, want string }{
		{"n1", "proxy", "fake-n1-proxy.txt"},
		{"n0", "node", "fake-n0-node.txt"},
		{"n0", "other", "n0.log"}, // a process the driver does not have
		{"n9", "node", "n9.log"},  // a node not in the plan
	} {
		if got := tn.logPath(tc.node, tc.proc); got != tn.Dir.Join(rundir.Logs, tc.want) {
			t.Errorf("logPath(%s, %s) = %s, want logs/%s", tc.node, tc.proc, got, tc.want)
		}
	}
	if err := os.WriteFile(tn.Dir.Join(rundir.Logs, "fake-n1-proxy.txt"), []byte("a\nproxy died\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tn.tail("n1", "proxy"); !strings.Contains(got, "proxy died") {
		t.Errorf("tail(n1, proxy) = %q, want the proxy's own log", got)
	}

	if err := tn.Wipe(context.Background(), "n1"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"n1 /bin/x " + tn.env.Homes}; !slices.Equal(f.resets, want) {
		t.Errorf("driver resets = %q, want %q", f.resets, want)
	}
	if err := tn.Wipe(context.Background(), "n9"); err == nil || !strings.Contains(err.Error(), `no node "n9"`) {
		t.Errorf("Wipe(n9) = %v, want no such node", err)
	}
	f.resetErr = fmt.Errorf("reset to genesis: %w for fake hosts", node.ErrNotSupported)
	err := tn.Wipe(context.Background(), "n0")
	if !errors.Is(err, node.ErrNotSupported) || !strings.Contains(err.Error(), "wipe n0: reset to genesis: not supported for fake hosts") {
		t.Errorf("Wipe(n0) = %v, want the driver's refusal with the node's name", err)
	}
	events, err := tn.Dir.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	var wipes []string
	for _, e := range events {
		if e.Kind == "node_wipe" {
			wipes = append(wipes, e.Node)
		}
	}
	if !slices.Equal(wipes, []string{"n1"}) {
		t.Errorf("node_wipe events for %q, want only the successful wipe of n1", wipes)
	}
}

var _ node.Driver = (*fakeKind)(nil)
