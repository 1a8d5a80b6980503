package testnet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

// startRunner is a runner whose starts take a while; a start of failAt
// fails, and the start of exitAt reports an earlier node's exit instead.
type startRunner struct {
	infra.Runner // only Start, Endpoints and Exited are called
	exited       chan infra.Exit
	failAt       string
	exitAt       string
	starts       atomic.Int32
	once         sync.Once
}

func (r *startRunner) Start(ctx context.Context, p infra.Process) (int, error) {
	r.starts.Add(1)
	if p.Node == r.exitAt {
		r.once.Do(func() { r.exited <- infra.Exit{Node: "n0", Name: "node", Status: "task shutdown (exit code 0)"} })
	}
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if p.Node == r.failAt {
		return 0, fmt.Errorf("task of %s not running after 5m0s", p.Node)
	}
	return 1, nil
}
func (r *startRunner) Endpoints(string) (statefile.Endpoints, error) {
	return statefile.Endpoints{}, nil
}
func (r *startRunner) Exited() <-chan infra.Exit { return r.exited }

// TestStartsStopAtFirstFailure: once a start failed or a started node
// exited unasked, no further start begins (a 200-node swarm went on
// starting for 20 minutes after a worker's tasks were shut down), and the
// error is that failure, not the starts it cut short.
func TestStartsStopAtFirstFailure(t *testing.T) {
	for _, tc := range []struct {
		name, failAt, exitAt, want string
	}{
		{"a start fails", "n5", "", "start n5: task of n5 not running after 5m0s"},
		{"a node exits", "", "n5", "n0 node exited while the testnet was starting: task shutdown (exit code 0)"},
		{"all start", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := seamTestnet(t, &fakeNode{})
			tn.pids = map[string]int{}
			var nodes []*plan.Node
			for i := range 40 {
				nodes = append(nodes, &plan.Node{Name: fmt.Sprintf("n%d", i)})
			}
			tn.Plan.Nodes = nodes
			r := &startRunner{exited: make(chan infra.Exit, 1), failAt: tc.failAt, exitAt: tc.exitAt}
			tn.Runner = r
			err := tn.startNodes(context.Background(), nodes, tn.bins, tn.env, 4)
			n := int(r.starts.Load())
			switch {
			case tc.want == "" && (err != nil || n != len(nodes)):
				t.Fatalf("err %v after %d starts, want all %d", err, n, len(nodes))
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			case tc.want != "" && n > 5+2*4:
				t.Errorf("%d starts after the failure at the 6th: want at most those in flight", n)
			}
		})
	}
}

// fakeNode is a driver with one process per node.
type fakeNode struct{ fakeKind }

func (f *fakeNode) Processes(n *plan.Node, _ []node.Binary, _ node.Env) []infra.Process {
	return []infra.Process{{Node: n.Name, Name: "node"}}
}
