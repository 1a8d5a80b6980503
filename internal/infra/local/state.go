package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Resource kinds, in the order Setup creates them.
const (
	kindFirewall = "iptables" // an ACCEPT rule for the bridge (br_netfilter + FORWARD DROP)
	kindBridge   = "bridge"
	kindNetns    = "netns"
	kindVeth     = "veth"
	kindProcess  = "process"
)

// resource is one thing the runner created and must remove again.
type resource struct {
	Kind string `json:"kind"`
	Name string `json:"name"` // link/netns name, or the process's role ("node", "app")
	Node string `json:"node,omitempty"`
	// Processes: pid, process group and /proc start time (clock ticks since
	// boot), so a later down never signals a pid the kernel reused.
	PID       int    `json:"pid,omitempty"`
	PGID      int    `json:"pgid,omitempty"`
	StartTime uint64 `json:"starttime,omitempty"`
	// Args is the firewall rule specification (after the chain name).
	Args []string `json:"args,omitempty"`
}

// stateDoc is the JSON of state.json.
type stateDoc struct {
	RunID string `json:"run_id"`
	// Runner is the infra runner kind that wrote the file: `down` and
	// `status` dispatch on it.
	Runner string `json:"runner"`
	// Harness is the benchnet process that owns the run while it lives (a
	// foreground `up` holding the userspace links, a `run`): `down` asks it
	// to end the run itself before removing what is left.
	Harness   *harness   `json:"harness,omitempty"`
	Resources []resource `json:"resources"`
}

// harness identifies a process across pid reuse.
type harness struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"starttime"`
}

// stateFile keeps state.json in step with what exists: every change is
// written at once, atomically, because the harness can die at any moment.
// Resources are recorded just before they are created, so a crash between
// the two leaves a record of something that may not exist (harmless on
// teardown) rather than something that exists without a record.
type stateFile struct {
	path string
	mu   sync.Mutex
	doc  stateDoc
}

func newStateFile(path, runID string) *stateFile {
	return &stateFile{path: path, doc: stateDoc{RunID: runID, Runner: Kind, Resources: []resource{}}}
}

// readStateFile loads a state file written by a runner, live or dead.
func readStateFile(path string) (*stateFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	s := &stateFile{path: path}
	if err := json.Unmarshal(data, &s.doc); err != nil {
		return nil, fmt.Errorf("decode state %s: %w", path, err)
	}
	if !validRunID(s.doc.RunID) {
		return nil, fmt.Errorf("state %s: invalid run id %q", path, s.doc.RunID)
	}
	return s, nil
}

func (s *stateFile) saveLocked() error {
	data, err := json.MarshalIndent(s.doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return rundir.WriteAtomic(s.path, append(data, '\n'))
}

// setHarness records the run's owning process (written with the next save).
func (s *stateFile) setHarness(h *harness) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Harness = h
}

// save writes the file as it is.
func (s *stateFile) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

// add records r and writes the file.
func (s *stateFile) add(r resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Resources = append(s.doc.Resources, r)
	return s.saveLocked()
}

// update replaces the first resource of r's kind, node and name.
func (s *stateFile) update(r resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.doc.Resources {
		if x.Kind == r.Kind && x.Name == r.Name && x.Node == r.Node {
			s.doc.Resources[i] = r
			return s.saveLocked()
		}
	}
	s.doc.Resources = append(s.doc.Resources, r)
	return s.saveLocked()
}

// remove forgets every resource equal in kind, name and node (and pid for
// processes) and writes the file.
func (s *stateFile) remove(r resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.doc.Resources[:0]
	for _, x := range s.doc.Resources {
		if x.Kind == r.Kind && x.Name == r.Name && x.Node == r.Node && (r.Kind != kindProcess || x.PID == r.PID) {
			continue
		}
		out = append(out, x)
	}
	s.doc.Resources = out
	return s.saveLocked()
}

// snapshot returns a copy of the resources in creation order.
func (s *stateFile) snapshot() []resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]resource(nil), s.doc.Resources...)
}

// exists reports whether the state file was ever written.
func (s *stateFile) exists() bool {
	_, err := os.Stat(s.path)
	return err == nil
}

// NodePIDs returns, from a state file, the pid of every node's "node"
// process that is still the process that was started (nil on any error).
func NodePIDs(statePath string) map[string]int {
	s, err := readStateFile(statePath)
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, r := range s.doc.Resources {
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
