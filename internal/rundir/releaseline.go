package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ReleaseLine is a release-line measurement (`benchnet history run`) as release-line.json keeps it:
// which of its three stages are done and where they are, so that an
// interrupted one goes on.
type ReleaseLine struct {
	SchemaVersion int      `json:"schema_version"`
	Refs          []string `json:"refs"`
	Control       string   `json:"control"`
	Manifest      string   `json:"manifest,omitempty"`
	Quick         bool     `json:"quick"`
	Repeats       int      `json:"repeats"`
	Duration      string   `json:"duration"`
	// ControlQA: the control's A/A saturation QA (its operating point, the
	// lab's noise); BuildQAs each other build's paired saturation decision
	// against the control at that point; Steady the interleaved compare of
	// every build at the steady rate (tx/s per connection).
	ControlQA string            `json:"control_qa,omitempty"`
	Rate      float64           `json:"rate,omitempty"`
	BuildQAs  map[string]string `json:"build_qas,omitempty"`
	Steady    string            `json:"steady,omitempty"`
	Started   string            `json:"started"`
	Finished  string            `json:"finished,omitempty"`
}

// ReleaseLineFile is its name in a release-line directory; ReleaseLineSchema
// its version.
const (
	ReleaseLineFile   = "release-line.json"
	ReleaseLineSchema = 1
)

// Save writes s into dir atomically.
func (s *ReleaseLine) Save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, ReleaseLineFile), append(data, '\n'))
}

// ReadReleaseLine reads dir's record, refusing another schema.
func ReadReleaseLine(dir string) (*ReleaseLine, error) {
	data, err := os.ReadFile(filepath.Join(dir, ReleaseLineFile))
	if err != nil {
		return nil, err
	}
	var s ReleaseLine
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReleaseLineFile), err)
	}
	if s.SchemaVersion != ReleaseLineSchema || len(s.Refs) < 2 {
		return nil, fmt.Errorf("%s: not a release-line directory of this benchnet (schema %d, %d builds)", filepath.Join(dir, ReleaseLineFile), s.SchemaVersion, len(s.Refs))
	}
	return &s, nil
}
