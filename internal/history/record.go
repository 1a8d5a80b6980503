package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Record is one comparable unit of results: one run, one variant of a
// compare, one load (or the saturation search) of a sweep, one step and
// build of a QA. Source and Part identify it: the same directory added
// twice gives the same records, and the store keeps each once.
type Record struct {
	ID int64 // set by the store
	// Source is the directory that was added (absolute); Part says which
	// piece of it the record is ("" for a plain run or soak; e.g.
	// "variant base", "cell c=4 r=200 d=1m30s", "steady/variant candidate").
	Source string
	Part   string
	// Kind is the directory's kind: run, soak, compare, sweep (a grid),
	// search or qa.
	Kind string
	// Step is a QA's step without its build suffix (saturation,
	// saturation-paired, steady, latency-emulation, rotate): the same step
	// of two QAs is one series whatever build ran in it. "" outside a QA.
	Step string
	// Variant is the compare variant, or the QA build (baseline,
	// candidate); informative only: the build is in Builds.
	Variant  string
	Scenario string // the testbed manifest's name
	NodeKind string // plan.json's kind (cometbft, gossipsub)
	// TestbedHash is the canonical hash of the testbed: the manifest with
	// what is keyed elsewhere left out (TestbedHash in ingest_run.go).
	TestbedHash string
	Load        Load
	Emulation   Emulation
	Machine     Machine
	// Benchnet is the version of the benchnet that ran it, when known (the
	// recording hook knows it; a directory added later does not say).
	Benchnet string
	Builds   []Build
	// Started is when the first run started (RFC 3339, UTC); Recorded when
	// the record was stored.
	Started  string
	Recorded string
	// Runs are the repeats, each with its values of every judged metric.
	Runs []Run
	// Saturation and Probes: set on a search's (or grid line's) record.
	Saturation *Saturation
	Probes     []Probe
}

// Load is the load profile.
type Load struct {
	Rate        float64 // tx/s per connection (0 on a saturation record: searched)
	Connections int
	DurationSec float64
	Size        int // bytes per tx
}

// Emulation is the link-emulation profile.
type Emulation struct {
	Latency bool   // zones or a delay were emulated
	Zones   string // the zone set or matrix file ("" none)
}

// Machine is the fingerprint of the machine a record ran on.
type Machine struct {
	CPUModel string
	CPUs     int
	Kernel   string
	MemoryMB int64
	Governor string // cpu0's scaling_governor, "" where /sys does not show it
}

// Key is the fingerprint's short form (12 hex digits): records of two
// machines are never one series.
func (m Machine) Key() string {
	s := fmt.Sprintf("%s\x00%d\x00%s\x00%d", m.CPUModel, m.CPUs, m.Kernel, m.MemoryMB)
	if m.Governor != "" {
		// Appended only when known, so the key of a machine without it is
		// the one schema 1 (which had no governor) stored.
		s += "\x00" + m.Governor
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// Build is one binary the record's nodes ran, as provenance/*.txt in the
// run directory records it.
type Build struct {
	Release   string // name@version as the cache names it
	Program   string // cometbft, abci-cli, benchnet
	Reference string // as written (tag, commit, tree, file:)
	Kind      string // tag, commit, tree, file
	Module    string
	Version   string
	Commit    string // the tree's git revision, or a pseudo-version's commit
	Dirty     bool
	// DiffSHA256 hashes a dirty tree's diff; ContentSHA256 a tree's
	// compiled files; BinarySHA256 the binary that ran.
	DiffSHA256    string
	ContentSHA256 string
	BinarySHA256  string
}

// BuildLabel is the record's build as one string: the references its
// node binaries were given (the release where none was), sorted. A helper
// program (abci-cli) is not the build.
func BuildLabel(bs []Build) string {
	var out []string
	for _, b := range bs {
		if b.Program == "abci-cli" {
			continue
		}
		l := b.Reference
		if l == "" {
			l = b.Release
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " + ")
}

// Run is one repeat of a record.
type Run struct {
	Repeat int
	Dir    string // the run directory, for everything the store does not keep
	Valid  bool   // results.json's valid
	// Excluded says why a judgement leaves the run out (testbed-bound, its
	// figures unreadable); "" when it counts.
	Excluded string
	// Values holds every judged metric of the run's kind (figures), by key,
	// plus what the record's kind adds (busy_tps of a QA pair, a soak's fit).
	Values  map[string]float64
	Latency *Latency
}

// Latency is the run's headline latency distribution (results.json
// latency_ms), in milliseconds.
type Latency struct {
	N                            int
	Avg, Min, P50, P95, P99, Max float64
}

// Saturation is where a search (or one connection count of a grid) placed
// the saturation rate, in tx/s per connection.
type Saturation struct {
	Connections int
	Lo          float64 // the highest sustainable rate (0: none)
	Hi          float64 // the lowest saturated rate (0: none: open above)
	Outcome     string
	Rule        string
}

// Probe is one measured run of a search or grid.
type Probe struct {
	Seq         int // position in the run order
	Probe       int // the search's probe number (0 in a grid)
	Rate        float64
	Connections int
	Repeat      int
	State       string // the saturation rule's verdict (ok, saturated, invalid)
	TPS         float64
	P50Ms       float64
	Dir         string
}
