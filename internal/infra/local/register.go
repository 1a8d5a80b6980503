package local

import (
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/caps"
)

// Kind is the local runner's name in the infra registry and state files.
const Kind = "local"

func init() {
	infra.Register(Kind, infra.Kind{
		New: func(c infra.Config) (infra.Runner, error) {
			r := New(c.RunID, c.StatePath)
			r.Harness = c.Harness
			return r, nil
		},
		Down:      Down,
		Sweep:     Sweep,
		Commands:  Commands,
		Leftovers: Leftovers,
		// Namespaces on this machine: every link backend, any process
		// beside the node, any binary; no per-node limits (cgroups per
		// namespace are not wired).
		Caps: caps.Record{Links: []string{"netem", "userspace"}, Sidecars: true, GossipHosts: true, DynamicBinaries: true},
	})
}
