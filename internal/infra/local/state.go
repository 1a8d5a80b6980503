package local

import (
	"github.com/benchnet/benchnet/internal/infra/proctable"

	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// Resource kinds, in the order Setup creates them.
const (
	kindFirewall = "iptables" // an ACCEPT rule for the bridge (br_netfilter + FORWARD DROP)
	kindBridge   = "bridge"
	kindNetns    = "netns"
	kindVeth     = "veth"
	kindProcess  = statefile.KindProcess
)

// The state file is shared by every runner (see statefile).
type (
	resource  = statefile.Resource
	harness   = statefile.Harness
	stateFile = statefile.File
)

func newStateFile(path, runID string) *stateFile { return statefile.New(path, runID, Kind) }

// readStateFile loads a state file written by a runner, live or dead.
func readStateFile(path string) (*stateFile, error) { return statefile.Read(path) }

// NodePIDs returns, from a state file, the pid of every node's "node"
// process that is still the process that was started (nil on any error).
func NodePIDs(statePath string) map[string]int {
	s, err := readStateFile(statePath)
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, r := range s.Doc.Resources {
		if r.Kind == kindProcess && r.Name == "node" && alive(r.PID, r.StartTime) {
			out[r.Node] = r.PID
		}
	}
	return out
}

// The registry of live runs is shared by every runner (see proctable).

// RuntimeDirEnv overrides the runtime directory (default /run/benchnet).
const RuntimeDirEnv = proctable.RuntimeDirEnv

func activeDir() string                      { return proctable.ActiveDir() }
func register(runID, statePath string) error { return proctable.Register(runID, statePath) }
func unregister(runID string) error          { return proctable.Unregister(runID) }
func activeRuns() (map[string]string, error) { return proctable.ActiveRunIDs() }

// ActiveRuns returns the state file of every registered run, sorted by run
// id. Entries whose state file is gone are dropped from the registry.
func ActiveRuns() ([]string, error) { return proctable.ActiveRuns() }
