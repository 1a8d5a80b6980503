// Package statefile is the state.json every runner keeps in step with what
// it created: the run id, the runner kind (down, status and load dispatch on
// it), the owning harness, the resources and each node's endpoints. Every
// change is written at once, atomically, because the harness can die at any
// moment; resources are recorded just before they are created, so a crash
// between the two leaves a record of something that may not exist
// (harmless on teardown) rather than something that exists without one.
package statefile

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Resource is one thing a runner created and must remove again. Fields a
// runner does not use stay empty.
type Resource struct {
	Kind string `json:"kind"`
	Name string `json:"name"` // link/netns/network name, or a process's role ("node", "app")
	Node string `json:"node,omitempty"`
	// Container or service of a container runner.
	Container string `json:"container,omitempty"`
	Service   string `json:"service,omitempty"`
	// Processes: pid, process group and /proc start time (clock ticks since
	// boot), so a later down never signals a pid the kernel reused.
	PID       int    `json:"pid,omitempty"`
	PGID      int    `json:"pgid,omitempty"`
	StartTime uint64 `json:"starttime,omitempty"`
	// Args is a firewall rule specification (after the chain name).
	Args []string `json:"args,omitempty"`
}

// KindProcess is a node's process by host pid, under every runner: status
// and the collectors read /proc/<pid> from it.
const KindProcess = "process"

// Harness identifies the benchnet process that owns a run, across pid reuse.
type Harness struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"starttime"`
}

// Endpoints are where one node is reached, as its runner reports them
// (host:port each). P2P is the address its peers dial on the testnet's
// network; RPC and Metrics are where the harness reaches it, which under a
// swarm are ports published on the machine the node runs on.
type Endpoints struct {
	P2P     string `json:"p2p,omitempty"`
	RPC     string `json:"rpc,omitempty"`
	Metrics string `json:"metrics,omitempty"`
	// Linkem is where the node's link agent serves its metrics (runners
	// whose links are emulated beside each node: swarm).
	Linkem string `json:"linkem,omitempty"`
}

// Doc is the JSON of state.json.
type Doc struct {
	RunID     string               `json:"run_id"`
	Runner    string               `json:"runner"`
	Harness   *Harness             `json:"harness,omitempty"`
	Resources []Resource           `json:"resources"`
	Endpoints map[string]Endpoints `json:"endpoints,omitempty"`
}

// File is one run's state.json. Doc may be read directly on a File no one
// else writes (one from Read); writers go through the methods.
type File struct {
	path string
	mu   sync.Mutex
	Doc  Doc
}

var runIDRe = regexp.MustCompile(`^[0-9a-f]{6}$`)

// ValidRunID reports whether id is a run id (6 lowercase hex digits).
func ValidRunID(id string) bool { return runIDRe.MatchString(id) }

// New returns the (unwritten) state of a new run of runner kind.
func New(path, runID, runner string) *File {
	return &File{path: path, Doc: Doc{RunID: runID, Runner: runner, Resources: []Resource{}}}
}

// Read loads a state file written by a runner, live or dead.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	s := &File{path: path}
	if err := json.Unmarshal(data, &s.Doc); err != nil {
		return nil, fmt.Errorf("decode state %s: %w", path, err)
	}
	if !ValidRunID(s.Doc.RunID) {
		return nil, fmt.Errorf("state %s: invalid run id %q", path, s.Doc.RunID)
	}
	return s, nil
}

// Path is where the file lives.
func (s *File) Path() string { return s.path }

func (s *File) saveLocked() error {
	data, err := json.MarshalIndent(s.Doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := rundir.WriteAtomic(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// Save writes the file as it is.
func (s *File) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

// SetHarness records the run's owning process (written with the next save).
func (s *File) SetHarness(h *Harness) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Doc.Harness = h
}

// Add records r and writes the file.
func (s *File) Add(r Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Doc.Resources = append(s.Doc.Resources, r)
	return s.saveLocked()
}

// Update replaces the first resource of r's kind, node and name, or adds r.
func (s *File) Update(r Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.Doc.Resources {
		if x.Kind == r.Kind && x.Name == r.Name && x.Node == r.Node {
			s.Doc.Resources[i] = r
			return s.saveLocked()
		}
	}
	s.Doc.Resources = append(s.Doc.Resources, r)
	return s.saveLocked()
}

// Remove forgets every resource equal to r in kind, name and node (and pid
// for processes) and writes the file.
func (s *File) Remove(r Resource) error {
	return s.RemoveFunc(func(x Resource) bool {
		return x.Kind == r.Kind && x.Name == r.Name && x.Node == r.Node && (r.Kind != KindProcess || x.PID == r.PID)
	})
}

// RemoveNode forgets every resource of one process of a node.
func (s *File) RemoveNode(node, name string) error {
	return s.RemoveFunc(func(x Resource) bool { return x.Node == node && x.Name == name })
}

// RemoveFunc forgets the resources drop matches and writes the file.
func (s *File) RemoveFunc(drop func(Resource) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.Doc.Resources[:0]
	for _, x := range s.Doc.Resources {
		if !drop(x) {
			out = append(out, x)
		}
	}
	s.Doc.Resources = out
	return s.saveLocked()
}

// Snapshot returns a copy of the resources in creation order.
func (s *File) Snapshot() []Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Resource(nil), s.Doc.Resources...)
}

// Clear forgets every resource and endpoint (written with the next save).
func (s *File) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Doc.Resources = []Resource{}
	s.Doc.Endpoints = nil
}

// SetEndpoints records where node is reached and writes the file.
func (s *File) SetEndpoints(node string, e Endpoints) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Doc.Endpoints == nil {
		s.Doc.Endpoints = map[string]Endpoints{}
	}
	s.Doc.Endpoints[node] = e
	return s.saveLocked()
}

// Endpoints returns a copy of the recorded endpoints by node.
func (s *File) Endpoints() map[string]Endpoints {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.Doc.Endpoints)
}

// Exists reports whether the file was ever written (and not removed).
func (s *File) Exists() bool {
	_, err := os.Stat(s.path)
	return err == nil
}
