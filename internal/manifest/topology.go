package manifest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/topology"
)

// The graph topologies of [network].topology (internal/topology) and the
// uniform link delay, validated here with the rest of the manifest.

// Topologies lists every [network].topology value: the CometBFT peering
// modes, then the seeded graphs of internal/topology.
var Topologies = append([]string{"full", "seeds", "random"}, topology.Kinds[1:]...)

// IsGraphTopology reports whether t is built by internal/topology ("full"
// is too, but keeps its both-sides peering of before).
func IsGraphTopology(t string) bool { return t != "full" && slices.Contains(topology.Kinds, t) }

// MaxDelay bounds [network].delay (Whiteblock's worst case is 400 ms).
const MaxDelay = 10 * time.Second

// ParseDelay parses [network].delay, the one-way delay added to every link
// ("100ms"). "" means none.
func ParseDelay(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxDelay {
		return 0, fmt.Errorf("%q: want a one-way delay from 0 to %s (\"100ms\")", s, MaxDelay)
	}
	return d, nil
}

// validateTopology checks [network].topology's own keys: m and degree for
// the graphs that use them, against the node count; total and seeds are
// the node counts (clamped), valid only when countsOK.
func (m *Manifest) validateTopology(add func(string, string, ...any), total, seeds int, countsOK bool) {
	nw := &m.Network
	if _, err := ParseDelay(nw.Delay); err != nil {
		add("network.delay", "%v", err)
	}
	if !slices.Contains(Topologies, nw.Topology) {
		add("network.topology", "%q: want one of %s", nw.Topology, quoteList(Topologies))
		return
	}
	if nw.Topology != topology.BarabasiAlbert && (nw.M != 0 || m.pos.has("network.m")) {
		add("network.m", "only the \"barabasi-albert\" topology takes m; remove it or set topology = \"barabasi-albert\"")
	}
	if nw.Topology != topology.RandomRegular && (nw.Degree != 0 || m.pos.has("network.degree")) {
		add("network.degree", "only the \"random-regular\" topology takes degree; remove it or set topology = \"random-regular\"")
	}
	if !IsGraphTopology(nw.Topology) || !countsOK {
		return
	}
	if seeds > 0 {
		add("network.topology", "%q turns PEX off (the graph is the plan's), so seed nodes would serve no one: remove the seed group or use topology = \"seeds\"", nw.Topology)
		return
	}
	field := "network.topology"
	switch nw.Topology {
	case topology.BarabasiAlbert:
		field = "network.m"
	case topology.RandomRegular:
		field = "network.degree"
	}
	if err := topology.Check(topology.Spec{Kind: nw.Topology, M: nw.M, Degree: nw.Degree}, total); err != nil {
		if field != "network.topology" && !m.pos.has(field) {
			// Point at the line that asked for the graph.
			add("network.topology", "%q needs %s: %v", nw.Topology, strings.TrimPrefix(field, "network."), err)
			return
		}
		add(field, "%v", err)
	}
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
