package testnet

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
)

// checkAddresses makes sure the runner put every node where the plan says
// peers dial it: the plan is resolved once (a runner whose nodes are dialled
// by name declares caps.Record.PeersByName and the plan carries the names),
// and plan.json is never rewritten, so a runner that disagrees is a bug to
// stop at, not an address to adopt.
func (t *Testnet) checkAddresses() error {
	for _, n := range t.Plan.Nodes {
		ep, err := t.Runner.Endpoints(n.Name)
		if err != nil {
			return err
		}
		if ep.P2P != "" && ep.P2P != n.P2PAddr() {
			return fmt.Errorf("node %s: the runner put its p2p endpoint at %s, the plan at %s (a runner dialled by name declares PeersByName)", n.Name, ep.P2P, n.P2PAddr())
		}
	}
	return nil
}

// reach records where the harness reaches a started node, when the runner
// says it is not the node's address (published ports). Written before the
// node counts as started, so readers that see it started see this too.
func (t *Testnet) reach(n *plan.Node) error {
	ep, err := t.Runner.Endpoints(n.Name)
	if err != nil {
		return err
	}
	Reach(n, ep)
	return nil
}

// Reach sets n's harness-side endpoints from a runner's report, leaving
// them empty (the plan address) where they agree with it.
func Reach(n *plan.Node, ep statefile.Endpoints) {
	at := infra.PlanEndpoints(n)
	var rpc, metrics string
	if ep.RPC != "" && ep.RPC != at.RPC {
		rpc = ep.RPC
	}
	if ep.Metrics != "" && ep.Metrics != at.Metrics {
		metrics = ep.Metrics
	}
	n.SetReach(rpc, metrics)
}

// ReachFromState sets the endpoints state.json records on p's nodes, for
// commands that attach to a testnet another process brought up (load,
// status). A state file without endpoints leaves the plan addresses.
func ReachFromState(p *plan.Testnet, statePath string) error {
	eps, err := infra.StateEndpoints(statePath)
	if err != nil {
		return err
	}
	for _, n := range p.Nodes {
		if ep, ok := eps[n.Name]; ok {
			Reach(n, ep)
		}
	}
	return nil
}
