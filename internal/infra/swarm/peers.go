package swarm

import "github.com/benchnet/benchnet/internal/plan"

// mirrorPeers lists every persistent-peer link on both of its nodes.
//
// CometBFT (p2p.Switch.AddPersistentPeers, v0.38 to v1.0) resolves peer
// names once, when the node starts, and drops a name that does not resolve
// yet. On a swarm a node's name (its dnsrr alias) resolves only once its
// task runs, so a link listed only on the side that starts first is lost
// for good: the random topology lists each link on one side, and its dial
// graph has cycles (a path plus random chords), so no start order saves
// every link; start_delay and restarts would undo any order anyway. Listed
// on both sides, whichever node starts later resolves the other and dials
// it, and the earlier one drops the name and accepts: still one connection
// per link, so the graph and its degree are the plan's.
//
// It changes the nodes' PersistentPeers in place, before the homes are
// generated; plan.json, rewritten with the swarm's addresses after Setup,
// records the lists as deployed (`benchnet plan` shows the one-sided ones).
func mirrorPeers(p *plan.Testnet) {
	listed := make(map[string]map[string]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		listed[n.Name] = map[string]bool{}
		for _, q := range n.PersistentPeers {
			listed[n.Name][q] = true
		}
	}
	extra := map[string]map[string]bool{}
	for _, n := range p.Nodes {
		for _, q := range n.PersistentPeers {
			if l, ok := listed[q]; ok && !l[n.Name] {
				if extra[q] == nil {
					extra[q] = map[string]bool{}
				}
				extra[q][n.Name] = true
			}
		}
	}
	// Appended in plan order, so the homes are a function of the plan.
	for _, n := range p.Nodes {
		for _, m := range p.Nodes {
			if extra[n.Name][m.Name] {
				n.PersistentPeers = append(n.PersistentPeers, m.Name)
			}
		}
	}
}
