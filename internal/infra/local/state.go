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
// process that is still the process that was started (nil on any error);
// proctable holds it, for every runner's state.
func NodePIDs(statePath string) map[string]int { return proctable.NodePIDs(statePath) }

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
