package cometbft

import (
	"fmt"
	"sort"
	"time"

	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// costModel is the kind's capacity.Model.
var costModel = capacity.Model{Need: needConsensus, LargeDefaults: largeDefaults}

// The cost model, calibrated on this 2-core machine (issue 14): a node's CPU
// is a fixed idle part, a part per peer connection, and a part per height it
// processes, which grows with the validators whose votes it handles. Fitted
// to the quickstart (4 validators, ~0.05 cores a node at ~0.9 blocks/s) and
// two 64-node testnets with the large timeouts: 62 validators and 2 seeds
// over PEX (~0.2 blocks/s) and a full mesh on a single-node swarm (2016
// links: ready in 261 s, 0.042 blocks/s, load average 204). Large defaults slow consensus down (timeout_commit 2s), so a
// testnet that would need more cores than the machine has at the nominal
// block rate still fits when the rate the machine can sustain is above
// MinRate: a slower chain, stated before up, rather than a refusal.
const (
	CPUFixed     = 0.01    // cores per node, no consensus
	CPUPerPeer   = 0.00025 // cores per node per peer (pings, gossip bookkeeping)
	CPUPerHeight = 0.0397  // core-seconds per node per height, plus
	CPUPerVote   = 0.00107 // core-seconds per node per height per validator
	RSSPerPeer   = 1 << 20 // bytes per node per peer
	// quickstartCPU is what the model predicts for a quickstart node; a
	// measured profile scales the model by measured/quickstartCPU (a faster
	// or slower machine than the one it was fitted on).
	quickstartCPU = CPUFixed + 3*CPUPerPeer + 0.9*(CPUPerHeight+4*CPUPerVote)
)

// defaultMaxPEXPeers is CometBFT's max_num_outbound_peers, the peers a node
// of the seeds topology ends up with when the testnet is large.
const defaultMaxPEXPeers = 10

// needConsensus is CometBFT's model: the block rate the machine sustains.
func needConsensus(p *plan.Testnet, runner string) capacity.Estimate {
	e := capacity.Estimate{Nodes: len(p.Nodes), Runner: runner, Unit: "blocks/s", Share: 1, MinRate: capacity.MinRate,
		NominalIs: "timeouts allow", Advice: `a sparser topology (topology = "seeds" or "random"), a container runner on more machines`}
	seen := map[string]bool{}
	links, degree := capacity.PeerLinks(p)
	validators := 0
	for _, n := range p.Nodes {
		if n.Role == "validator" {
			validators++
		}
	}
	pexLinks := 0
	e.Nominal = 0
	for _, n := range p.Nodes {
		peers := degree[n.Name]
		if peers == 0 && len(n.Seeds) > 0 {
			peers = min(len(p.Nodes)-1, defaultMaxPEXPeers)
			pexLinks += peers
		}
		prof := capacity.Lookup(n.Release.String())
		if !seen[prof.Release] {
			seen[prof.Release] = true
			src := "default"
			if !prof.Measured.IsZero() {
				src = fmt.Sprintf("measured %s on %d nodes", prof.Measured.Format(time.DateOnly), prof.Nodes)
			}
			e.Sources = append(e.Sources, fmt.Sprintf("%s: %.3f cores, %d MiB per idle quickstart node (%s)", prof.Release, prof.CPU, prof.RSS>>20, src))
		}
		speed := min(max(prof.CPU/quickstartCPU, 0.25), 8)
		e.Fixed += speed * (CPUFixed + float64(peers)*CPUPerPeer)
		e.PerRate += speed * (CPUPerHeight + float64(validators)*CPUPerVote)
		e.RSS += max(prof.RSS+int64((float64(peers)-prof.Peers)*RSSPerPeer), prof.RSS/2) + capacity.RunnerRSS(runner)
		if r := nominalRate(n) / max(p.Network.TimeScale, 1); e.Nominal == 0 || r < e.Nominal {
			e.Nominal = r
		}
	}
	e.Links = links + pexLinks/2
	e.Rate = e.Nominal
	e.CPU = e.Fixed + e.PerRate*e.Rate
	return e
}

// nominalRate is the block rate a node's timeouts allow when CPU is not
// short: a height takes about timeout_commit plus 0.2 s of rounds (in real
// time: [network] time_scale divides it).
func nominalRate(n *plan.Node) float64 {
	commit := time.Second // CometBFT's default
	if v, ok := n.Config["consensus.timeout_commit"]; ok {
		if d, err := time.ParseDuration(fmt.Sprint(v)); err == nil {
			commit = d
		}
	}
	return 1 / (commit.Seconds() + 0.2)
}

// largeDefaults: a sparse topology instead of the full mesh (random, or
// seeds when there are seed nodes) and slower consensus (timeout_propose
// 10s, timeout_commit 2s), for every value the manifest does not set.
func largeDefaults(m *manifest.Manifest, nodes, seeds int) []string {
	var notes []string
	if m.Network.Topology == "full" && !m.Has("network.topology") {
		m.Network.Topology = "random"
		if seeds > 0 {
			m.Network.Topology = "seeds"
		}
		notes = append(notes, fmt.Sprintf("network.topology = %q (not a full mesh: %d nodes)", m.Network.Topology, nodes))
	}
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		for key, v := range map[string]string{"consensus.timeout_propose": "10s", "consensus.timeout_commit": "2s"} {
			if _, ok := g.Config[key]; ok {
				continue
			}
			if g.Config == nil {
				g.Config = map[string]any{}
			}
			g.Config[key] = v
			notes = append(notes, fmt.Sprintf("node.%s.config.%q = %q", name, key, v))
		}
	}
	sort.Strings(notes)
	return notes
}
