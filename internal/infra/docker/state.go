package docker

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The state file has the local runner's shape (run id, runner, harness,
// resources), so the registry of live runs, `status` and the collectors read
// node pids from it the same way; what it adds are the Docker objects.
const (
	kindNetwork   = "network"
	kindContainer = "container"
	kindProcess   = "process" // a container's main process, by host pid
)

type resource struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	Container string `json:"container,omitempty"`
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"starttime,omitempty"`
}

type harness struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"starttime"`
}

type stateDoc struct {
	RunID     string     `json:"run_id"`
	Runner    string     `json:"runner"`
	Harness   *harness   `json:"harness,omitempty"`
	Resources []resource `json:"resources"`
}

type stateFile struct {
	path string
	mu   sync.Mutex
	doc  stateDoc
}

func newStateFile(path, runID string) *stateFile {
	return &stateFile{path: path, doc: stateDoc{RunID: runID, Runner: Kind, Resources: []resource{}}}
}

func readStateFile(path string) (*stateFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	s := &stateFile{path: path}
	if err := json.Unmarshal(data, &s.doc); err != nil {
		return nil, fmt.Errorf("decode state %s: %w", path, err)
	}
	if !local.ValidRunID(s.doc.RunID) {
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
	if err := rundir.WriteAtomic(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

func (s *stateFile) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

func (s *stateFile) setHarness(h *harness) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Harness = h
}

func (s *stateFile) add(r resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Resources = append(s.doc.Resources, r)
	return s.saveLocked()
}

// update replaces the resource of r's kind, node and name, or adds it.
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

// removeNode forgets a node process's container and pid.
func (s *stateFile) removeNode(node, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.doc.Resources[:0]
	for _, x := range s.doc.Resources {
		if x.Node == node && x.Name == name {
			continue
		}
		out = append(out, x)
	}
	s.doc.Resources = out
	return s.saveLocked()
}

func (s *stateFile) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Resources = []resource{}
}

func (s *stateFile) exists() bool {
	_, err := os.Stat(s.path)
	return err == nil
}
