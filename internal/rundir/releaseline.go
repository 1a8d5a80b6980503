package rundir

import "fmt"

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

// ReleaseLineRecord is release-line.json's codec: another schema, or a
// line of fewer than two builds, is not a release-line directory of this
// benchnet.
var ReleaseLineRecord = Record[ReleaseLine]{Name: ReleaseLineFile, Schema: ReleaseLineSchema, Exact: true, Check: func(s *ReleaseLine) error {
	if len(s.Refs) < 2 {
		return fmt.Errorf("not a release-line directory: %d builds, want 2 or more", len(s.Refs))
	}
	return nil
}}
