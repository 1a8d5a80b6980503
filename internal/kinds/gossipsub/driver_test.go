package gossipsub

import (
	"fmt"
	"testing"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// Every planned link appears in both hosts' configs, is dialled by exactly
// one side, and names the other by its seeded peer ID.
func TestHostConfigPeersEveryLinkOnce(t *testing.T) {
	for _, topo := range []string{"full", "line", "random"} {
		t.Run(topo, func(t *testing.T) {
			extra := ""
			if topo == "random" {
				extra = "peers = 3\n"
			}
			m, err := manifest.Parse("t.toml", []byte(fmt.Sprintf("seed = 5\n[network]\ntopology = %q\n%s[node.g]\nkind = \"gossipsub\"\ncount = 12\n", topo, extra)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Resolve(m)
			if err != nil {
				t.Fatal(err)
			}
			var tables spec.Tables
			if err := p.KindTables(&tables); err != nil || tables.Gossipsub.D != spec.DefaultD {
				t.Fatalf("the plan's [gossipsub] table: %+v, %v", tables, err)
			}
			type link struct{ a, b string }
			dials := map[link]int{}
			listed := map[link]bool{}
			for _, n := range p.Nodes {
				c := HostConfig(p, n, "/x/"+n.Name+".csv")
				if c.Params != tables.Gossipsub || c.ControlPort != n.RPCPort || c.Addr != n.Addr.String() {
					t.Errorf("%s: config %+v does not follow the plan", n.Name, c)
				}
				for _, peer := range c.Peers {
					o := p.Node(peer.Name)
					if peer.ID != PeerID(p.Seed, o.Index).String() || peer.Addr != o.Addr.String() {
						t.Errorf("%s: peer %+v is not %s's identity/address", n.Name, peer, o.Name)
					}
					l := link{min(n.Name, o.Name), max(n.Name, o.Name)}
					listed[l] = true
					if peer.Dial {
						dials[l]++
					}
				}
			}
			want := 0
			for _, n := range p.Nodes {
				want += len(n.PersistentPeers)
			}
			if topo == "full" {
				want /= 2 // both sides list each other
			}
			if len(listed) != want {
				t.Errorf("%d links in the host configs, plan has %d", len(listed), want)
			}
			for l := range listed {
				if dials[l] != 1 {
					t.Errorf("link %v dialled by %d sides, want 1", l, dials[l])
				}
			}
		})
	}
}
