package gossipsub

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/plan"
)

// Gossip hosts get no large defaults: they have no consensus timeouts, and
// their topology is the experiment (Whiteblock's series 11 is a full mesh).
// costModel is the kind's capacity.Model.
var costModel = capacity.Model{Need: needGossip}

// The gossipsub host's model, fitted on this machine to 95 hosts (seed 42,
// 1000 B messages; issue 12): Barabási–Albert m = 2, 6, 12 at 10 msg/s
// (0.57, 0.89, 0.92 % of a core per host) and the full mesh at 5 msg/s
// (1.16 %). A host costs a fixed part, a part per connection (heartbeats,
// IHAVE), and a part per message and mesh link, the mesh being at most
// Dhi links whatever the degree.
const (
	GossipCPUFixed   = 0.0041    // cores per host
	GossipCPUPerPeer = 0.000058  // cores per host per connection
	GossipCPUPerLink = 0.0000342 // core-seconds per message per mesh link
	GossipDhi        = 12        // go-libp2p-pubsub's default Dhi
	// GossipShare of the cores may go to the hosts: the harness (publisher,
	// collector, and the link emulator when links are impaired) needs the
	// rest, or the publish lag invalidates the run.
	GossipShare = 0.75
)

// needGossip is the gossipsub host's model: the publish rate (messages/s
// over the network) the machine sustains against the manifest's.
func needGossip(p *plan.Testnet, runner string) capacity.Estimate {
	e := capacity.Estimate{Nodes: len(p.Nodes), Runner: runner, Unit: "msg/s", Share: GossipShare,
		NominalIs: "publish rate", Advice: "a lower publish rate (publish.rate, --rate)"}
	links, degree := capacity.PeerLinks(p)
	prof := capacity.Lookup(spec.Release.String())
	e.Sources = append(e.Sources, fmt.Sprintf("%s: %d MiB per host (%s)", prof.Release, prof.RSS>>20, map[bool]string{true: "default", false: "measured"}[prof.Measured.IsZero()]))
	for _, n := range p.Nodes {
		peers := degree[n.Name]
		e.Fixed += GossipCPUFixed + float64(peers)*GossipCPUPerPeer
		e.PerRate += float64(min(peers, GossipDhi)) * GossipCPUPerLink
		e.RSS += prof.RSS + capacity.RunnerRSS(runner)
	}
	e.Links = links
	if p.Publish != nil {
		e.Nominal = p.Publish.Rate
	}
	e.MinRate = e.Nominal
	e.Rate = e.Nominal
	e.CPU = e.Fixed + e.PerRate*e.Rate
	return e
}
