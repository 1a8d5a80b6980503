package testnet

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// adoptAddresses takes every node's address on the testnet's network from
// the runner once Setup ran (a swarm cannot place a service at the plan's
// address; its virtual IP is what peers dial) and rewrites plan.json when
// any differs, so the run directory records the addresses the nodes had.
func (t *Testnet) adoptAddresses() error {
	changed := false
	for _, n := range t.Plan.Nodes {
		ep, err := t.Runner.Endpoints(n.Name)
		if err != nil {
			return err
		}
		if ep.P2P == n.P2PAddr() {
			continue
		}
		host, port, err := net.SplitHostPort(ep.P2P)
		if err != nil {
			return fmt.Errorf("node %s: runner's p2p endpoint %q: %w", n.Name, ep.P2P, err)
		}
		pn, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("node %s: runner's p2p endpoint %q: %w", n.Name, ep.P2P, err)
		}
		n.P2PPort = pn
		if a, err := netip.ParseAddr(host); err == nil {
			n.Addr, n.Host = a, ""
		} else {
			// A name (a swarm service's): Addr stays the plan's, unused.
			n.Host = host
		}
		changed = true
	}
	if !changed {
		return nil
	}
	pj, err := t.Plan.JSON()
	if err != nil {
		return err
	}
	return t.Dir.WriteFile(rundir.Plan, pj)
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
	if ep.RPC != "" && ep.RPC != at.RPC {
		n.RPCReach = ep.RPC
	}
	if ep.Metrics != "" && ep.Metrics != at.Metrics {
		n.MetricsReach = ep.Metrics
	}
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
