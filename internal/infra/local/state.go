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

// The registry of live runs is shared by every runner (see proctable).

func activeDir() string                      { return proctable.ActiveDir() }
func register(runID, statePath string) error { return proctable.Register(runID, statePath) }
func unregister(runID string) error          { return proctable.Unregister(runID) }
func activeRuns() (map[string]string, error) { return proctable.ActiveRunIDs() }
