package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/rundir"
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

// Registry of live runs: <runtime dir>/active/<runid> holds the absolute path
// of the run's state file, so `benchnet down` with no argument finds them all.

// RuntimeDirEnv overrides the runtime directory (default /run/benchnet).
const RuntimeDirEnv = "BENCHNET_RUNTIME_DIR"

func activeDir() string {
	dir := os.Getenv(RuntimeDirEnv)
	if dir == "" {
		dir = "/run/benchnet"
	}
	return filepath.Join(dir, "active")
}

func register(runID, statePath string) error {
	abs, err := filepath.Abs(statePath)
	if err != nil {
		return fmt.Errorf("register run %s: %w", runID, err)
	}
	if err := os.MkdirAll(activeDir(), 0o755); err != nil {
		return fmt.Errorf("register run %s: %w", runID, err)
	}
	return rundir.WriteAtomic(filepath.Join(activeDir(), runID), []byte(abs+"\n"))
}

func unregister(runID string) error {
	err := os.Remove(filepath.Join(activeDir(), runID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unregister run %s: %w", runID, err)
	}
	return nil
}

// ActiveRuns returns the state file of every registered run, sorted by run
// id. Entries whose state file is gone are dropped from the registry.
func ActiveRuns() ([]string, error) {
	runs, err := activeRuns()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = runs[id]
	}
	return out, nil
}

// activeRuns maps run id to state file path.
func activeRuns() (map[string]string, error) {
	entries, err := os.ReadDir(activeDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list active runs: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !validRunID(e.Name()) {
			continue // temp files, strangers
		}
		data, err := os.ReadFile(filepath.Join(activeDir(), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("list active runs: %w", err)
		}
		path := string(trimSpace(data))
		if _, err := os.Stat(path); err != nil {
			_ = unregister(e.Name())
			continue
		}
		out[e.Name()] = path
	}
	return out, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
