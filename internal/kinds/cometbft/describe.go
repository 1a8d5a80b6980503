package cometbft

import (
	"fmt"
	"os"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

var _ node.Describer = (*Driver)(nil)

// Describe lists the binaries of every release p runs (cometbft, and
// abci-cli where a node runs the socket kvstore) and whether `up` will have
// to build them.
func (d *Driver) Describe(p *plan.Testnet) []string {
	var out []string
	for _, rel := range p.Releases() {
		tools := []string{"cometbft"}
		for _, n := range p.Nodes {
			if n.Release == rel && n.App == "kvstore-socket" {
				tools = append(tools, "abci-cli")
				break
			}
		}
		for _, tool := range tools {
			bin, state := binaries.Path(rel, tool), "cached"
			if _, err := os.Stat(bin); err != nil {
				state = "not built yet: up builds it, or 'benchnet build " + rel.String() + "'"
			}
			out = append(out, fmt.Sprintf("binary %s %s: %s (%s)", rel, tool, bin, state))
		}
	}
	return out
}
