package plan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/topology"
)

func graphPlan(t *testing.T, seed int64, net string, n int) *Testnet {
	t.Helper()
	m, err := manifest.Parse("g.toml", []byte(fmt.Sprintf("seed = %d\n[network]\n%s\n[node.validator]\ncount = %d\n", seed, net, n)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGraphTopologies(t *testing.T) {
	for _, tc := range []struct {
		net  string
		spec topology.Spec
	}{
		{"topology = \"barabasi-albert\"\nm = 6", topology.Spec{Kind: topology.BarabasiAlbert, M: 6}},
		{"topology = \"random-regular\"\ndegree = 4", topology.Spec{Kind: topology.RandomRegular, Degree: 4}},
		{"topology = \"line\"", topology.Spec{Kind: topology.Line}},
		{"topology = \"ring\"", topology.Spec{Kind: topology.Ring}},
	} {
		const n = 30
		p := graphPlan(t, 42, tc.net, n)
		want, _ := topology.Edges(tc.spec, n, 42)
		if !slices.Equal(p.Edges, want) {
			t.Errorf("%s: plan edges differ from topology.Edges(seed 42)", tc.spec.Kind)
		}
		// Each edge is listed once, by its lower node; Neighbours sees both sides.
		listed := 0
		for i, node := range p.Nodes {
			listed += len(node.PersistentPeers)
			adj := topology.Adjacency(n, want)[i]
			var names []string
			for _, j := range adj {
				names = append(names, p.Nodes[j].Name)
			}
			if got := p.Neighbours(node.Name); !slices.Equal(got, names) {
				t.Errorf("%s: Neighbours(%s) = %v, want %v", tc.spec.Kind, node.Name, got, names)
			}
			if len(node.Seeds) != 0 {
				t.Errorf("%s: %s has seeds %v", tc.spec.Kind, node.Name, node.Seeds)
			}
		}
		if listed != len(want) {
			t.Errorf("%s: %d persistent peers listed, want one per edge (%d)", tc.spec.Kind, listed, len(want))
		}
	}
	a := graphPlan(t, 42, "topology = \"barabasi-albert\"\nm = 2", 95)
	b := graphPlan(t, 42, "topology = \"barabasi-albert\"\nm = 2", 95)
	c := graphPlan(t, 43, "topology = \"barabasi-albert\"\nm = 2", 95)
	if !slices.Equal(a.Edges, b.Edges) || slices.Equal(a.Edges, c.Edges) {
		t.Errorf("same seed must give the same graph and another seed another")
	}
}
