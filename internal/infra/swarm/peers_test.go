package swarm

import (
	"fmt"
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// links is the set of undirected persistent-peer links of p, "a|b" with a
// before b in plan order.
func links(p *plan.Testnet) map[string]bool {
	out := map[string]bool{}
	for _, n := range p.Nodes {
		for _, q := range n.PersistentPeers {
			a, b := n, p.Node(q)
			if a.Index > b.Index {
				a, b = b, a
			}
			out[a.Name+"|"+b.Name] = true
		}
	}
	return out
}

// formed simulates a swarm start: nodes start one after another in plan
// order (testnet.startOrder without seeds), and a node dials only the listed
// peers already running, as CometBFT drops a name that does not resolve
// when it starts.
func formed(p *plan.Testnet) map[string]bool {
	out := map[string]bool{}
	running := map[string]bool{}
	for _, n := range p.Nodes {
		for _, q := range n.PersistentPeers {
			if running[q] {
				out[q+"|"+n.Name] = true
			}
		}
		running[n.Name] = true
	}
	return out
}

func resolve(t *testing.T, topology string, n int, extra string) *plan.Testnet {
	t.Helper()
	src := fmt.Sprintf("name = \"t\"\nseed = 7\n[network]\nsubnet = \"10.77.0.0/16\"\ntopology = %q\n%s[node.validator]\ncount = %d\n",
		topology, extra, n)
	m, err := manifest.Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every planned link forms on a swarm once mirrored; the one-sided lists of
// the sparse topologies lose links (the measured 64-node failure), which is
// what makes this test able to fail.
func TestMirrorPeersEveryLinkForms(t *testing.T) {
	for _, c := range []struct {
		topology string
		n        int
		extra    string
		loses    bool // whether the plan's own lists lose links
	}{
		{"random", 64, "peers = 3\n", true},
		{"random", 16, "peers = 3\n", true},
		{"ring", 8, "", true},
		{"full", 8, "", false},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.topology, c.n), func(t *testing.T) {
			p := resolve(t, c.topology, c.n, c.extra)
			want := links(p)
			if lost := len(want) - len(formed(p)); (lost > 0) != c.loses {
				t.Errorf("plan's own lists lose %d of %d links, want loss=%v", lost, len(want), c.loses)
			}
			mirrorPeers(p)
			if got := links(p); len(got) != len(want) {
				t.Errorf("mirroring changed the graph: %d links, want %d", len(got), len(want))
			}
			if got := formed(p); len(got) != len(want) {
				t.Errorf("after mirroring %d of %d links form", len(got), len(want))
			}
			before := make([][]string, len(p.Nodes))
			for i, n := range p.Nodes {
				if i := slices.Index(n.PersistentPeers, n.Name); i >= 0 {
					t.Errorf("%s lists itself", n.Name)
				}
				seen := map[string]bool{}
				for _, q := range n.PersistentPeers {
					if seen[q] {
						t.Errorf("%s lists %s twice", n.Name, q)
					}
					seen[q] = true
				}
				before[i] = slices.Clone(n.PersistentPeers)
			}
			mirrorPeers(p)
			for i, n := range p.Nodes {
				if !slices.Equal(n.PersistentPeers, before[i]) {
					t.Errorf("mirroring twice changed %s: %v, then %v", n.Name, before[i], n.PersistentPeers)
				}
			}
		})
	}
}

// No start order saves the random topology's one-sided lists: its dial graph
// (a node -> the peers it lists) has a cycle, so some node in it starts
// before a node it dials whatever the order. This is why the runner mirrors
// the lists rather than ordering the starts.
func TestRandomDialGraphHasCycle(t *testing.T) {
	p := resolve(t, "random", 64, "peers = 3\n")
	const white, grey, black = 0, 1, 2
	colour := map[string]int{}
	var cyclic func(name string) bool
	cyclic = func(name string) bool {
		colour[name] = grey
		for _, q := range p.Node(name).PersistentPeers {
			if colour[q] == grey || colour[q] == white && cyclic(q) {
				return true
			}
		}
		colour[name] = black
		return false
	}
	for _, n := range p.Nodes {
		if colour[n.Name] == white && cyclic(n.Name) {
			return
		}
	}
	t.Fatal("the 64-node random dial graph is acyclic: a topological start order would do")
}

// The plan resolved for swarm names every node's host as its service alias,
// which is where Endpoints puts its p2p address: the testnet stops a run
// where the two differ rather than rewrite plan.json (issue 35, item 3).
func TestPlanDialsByName(t *testing.T) {
	p := resolve(t, "full", 3, "[infra]\nrunner = \"swarm\"\n")
	for _, n := range p.Nodes {
		if n.Host != n.Name || p2pAddr(n) != n.P2PAddr() {
			t.Errorf("%s: host %q, peers dial %s, the runner puts it at %s", n.Name, n.Host, n.P2PAddr(), p2pAddr(n))
		}
	}
	if local := resolve(t, "full", 3, ""); local.Nodes[0].Host != "" {
		t.Errorf("the local runner's plan names a host %q: its nodes have the plan's addresses", local.Nodes[0].Host)
	}
}
