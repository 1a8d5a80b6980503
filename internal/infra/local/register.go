package local

import (
	"context"
	"fmt"
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
		Down: Down,
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

// ClaimSetup is the start of every runner's Setup: the run id must be
// valid, and a runner is set up once (*planned, guarded by mu, takes p).
func ClaimSetup(runID string, mu *sync.Mutex, planned **plan.Testnet, p *plan.Testnet) error {
	if !validRunID(runID) {
		return fmt.Errorf("run id %q: want 6 lowercase hex digits", runID)
	}
	mu.Lock()
	defer mu.Unlock()
	if *planned != nil {
		return fmt.Errorf("run %s is already set up", runID)
	}
	*planned = p
	return nil
}

// CheckStart is what a runner checks before it starts proc: the run is not
// being cleaned up, is set up (p is its plan), has proc's node, and proc
// has a command.
func CheckStart(runID string, closing bool, p *plan.Testnet, proc infra.Process) error {
	key := proc.Node + "/" + proc.Name
	switch {
	case closing:
		return fmt.Errorf("start %s: run %s is being cleaned up", key, runID)
	case p == nil:
		return fmt.Errorf("start %s: run %s is not set up", key, runID)
	case p.Node(proc.Node) == nil:
		return fmt.Errorf("start %s: no node %q in the plan", key, proc.Node)
	case len(proc.Argv) == 0:
		return fmt.Errorf("start %s: empty argv", key)
	}
	return nil
}

// ReportExit sends ex on a runner's Exited channel unless the exit was
// expected (a stop or kill asked for it, or the cleanup). It never blocks:
// with nobody listening and the buffer full the report is dropped.
func ReportExit(exited chan<- infra.Exit, ex infra.Exit, expected bool) {
	if expected {
		return
	}
	select {
	case exited <- ex:
	default:
	}
}
