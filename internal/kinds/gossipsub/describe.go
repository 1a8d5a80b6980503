package gossipsub

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

var _ node.Describer = (*Driver)(nil)

// Describe says the hosts are this executable, and the router's parameters.
func (d *Driver) Describe(p *plan.Testnet) []string {
	var tables spec.Tables
	_ = p.KindTables(&tables) // a plan without the table: zeros, as written
	g := tables.Gossipsub
	return []string{
		fmt.Sprintf("hosts: this benchnet executable (benchnet node gossipsub), %s", p.Nodes[0].Release),
		fmt.Sprintf("gossipsub: D=%d Dlo=%d Dhi=%d Dlazy=%d heartbeat=%s flood_publish=%v outbound_queue=%d validate_queue=%d",
			g.D, g.Dlo, g.Dhi, g.Dlazy, g.Heartbeat.Duration, g.FloodPublish, g.OutboundQueue, g.ValidateQueue),
	}
}
