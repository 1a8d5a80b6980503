package local

import (
	"context"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/plan"
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
		Caps: infra.Capabilities{Links: []string{"netem", "userspace"}, Sidecars: true, GossipHosts: true, DynamicBinaries: true},
	})
}

// Register records a run of any runner in the registry of live runs, so
// `benchnet down` and `status` with no argument find it.
func Register(runID, statePath string) error { return register(runID, statePath) }

// Unregister drops a run from the registry of live runs.
func Unregister(runID string) error { return unregister(runID) }

// StartTime is a process's start time (clock ticks since boot) from /proc,
// which tells it apart from a later process with the same pid.
func StartTime(pid int) (uint64, error) { return startTime(pid) }

// Alive reports whether pid is still the process that started at start.
func Alive(pid int, start uint64) bool { return alive(pid, start) }

// WaitGone waits up to d for the process to end; false if it still runs.
func WaitGone(ctx context.Context, pid int, start uint64, d time.Duration) bool {
	return waitGone(ctx, pid, start, d)
}

// ValidRunID reports whether id is a run id (6 lowercase hex digits).
func ValidRunID(id string) bool { return validRunID(id) }

// ClaimSetup is the start of every runner's Setup (see proctable).
func ClaimSetup(runID string, mu *sync.Mutex, planned **plan.Testnet, p *plan.Testnet) error {
	return proctable.ClaimSetup(runID, mu, planned, p)
}

// CheckStart is what a runner checks before it starts proc (see proctable).
func CheckStart(runID string, closing bool, p *plan.Testnet, proc infra.Process) error {
	return proctable.CheckStart(runID, closing, p, proc)
}

// ReportExit sends ex on a runner's Exited channel unless expected (see proctable).
func ReportExit(exited chan<- infra.Exit, ex infra.Exit, expected bool) {
	proctable.ReportExit(exited, ex, expected)
}
