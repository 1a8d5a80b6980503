// Package manifest holds the raw testnet manifest as the user wrote it in TOML,
// its defaults and its validation. Resolution into concrete nodes, addresses and
// peers is the plan package's job; nothing here touches the machine.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Manifest is one testnet as declared in a TOML file. Every field's default is
// in defaults.go and documented in docs/manifest.md.
type Manifest struct {
	// Name labels the testnet, its run directories and its resources.
	Name string `toml:"name" json:"name"`
	// Seed makes every random choice of the plan (peer picks, zone
	// assignment, topologies) reproducible.
	Seed int64 `toml:"seed" json:"seed"`
	// Network is the address plan and link emulation.
	Network Network `toml:"network" json:"network"`
	// Node maps a group name to a group of identical nodes. Groups are
	// resolved in the order they appear in the file.
	Node map[string]*Group `toml:"node" json:"node"`
	// Load is the default workload of `benchnet run`.
	Load Load `toml:"load" json:"load"`
	// Genesis overrides genesis.json by dotted key
	// ("consensus_params.block.max_bytes" = 4194304), checked against the
	// release's own genesis when homes are generated.
	Genesis map[string]any `toml:"genesis" json:"genesis,omitempty"`
	// Variants holds the [variants.<name>] tables of `benchnet compare`
	// (variants.go): overrides of this manifest, one per variant.
	Variants map[string]any `toml:"variants" json:"-"`
	// Sweep is the [sweep] table of `benchnet sweep`; internal/experiment
	// owns its schema, strict decoding and validation.
	Sweep map[string]any `toml:"sweep" json:"-"`
	// QA is the [qa] table of `benchnet qa`; internal/experiment owns its
	// schema (experiment.QA), like [sweep].
	QA map[string]any `toml:"qa" json:"-"`
	// Infra picks the runner that hosts the nodes (infra.go).
	Infra Infra `toml:"infra" json:"infra"`
	// HaltLimit, Perturb and Rotate are faults and node churn during the
	// load (perturb.go).
	HaltLimit rundir.Duration `toml:"halt_limit" json:"halt_limit"`
	Perturb   []*Perturb      `toml:"perturb" json:"perturb,omitempty"`
	Rotate    *Rotate         `toml:"rotate" json:"rotate,omitempty"`
	// Publish is the workload of a kind that publishes (publish.go;
	// Schema.Publishes). The tables a kind owns are not fields: its
	// schema decodes them (kinds.go, KindTables).
	Publish Publish `toml:"publish,omitempty" json:"publish"`
	// Thresholds maps a metric key to a condition ("latency_p99" = "< 2s")
	// judged on every run after analysis; a failed one is exit 3
	// (thresholds.go).
	Thresholds map[string]string `toml:"thresholds" json:"thresholds,omitempty"`

	// File is the path the manifest was read from ("" for built-ins).
	File string `toml:"-" json:"-"`
	// Dir is where relative paths inside the manifest (a zone CSV) resolve:
	// File's directory, or the original's for a copy (see LoadCopy).
	Dir string `toml:"-" json:"-"`
	// Raw is the file's content as given, kept for the run directory.
	Raw []byte `toml:"-" json:"-"`
	// Releases and ReleaseInfo hold what CheckReleases resolved, by the
	// reference as written: the Release, and its provenance lines. Variants
	// share them.
	Releases    map[string]release.Release `toml:"-" json:"-"`
	ReleaseInfo map[string][]string        `toml:"-" json:"-"`

	pos positions
	// tables are the kind's own tables (Schema.NewTables), decoded.
	tables Tables
	// perturbPos has the lines of each [[perturb]] entry's keys.
	perturbPos []positions
	// zoneNames is the zone set of [network].zones, read at validation;
	// zonesPath the resolved path of a zone CSV.
	zoneNames []string
	zonesPath string
}

// RandomZone is the zone value that draws each node's zone from the seed.
const RandomZone = "random"

// Network is the [network] table.
type Network struct {
	// Subnet holds every node address; .1 is the harness's bridge address.
	Subnet string `toml:"subnet" json:"subnet"`
	// Topology is "full" (every node has every other as persistent peer),
	// "seeds" (nodes know only the seed nodes and find peers with PEX) or
	// "random" (a connected random graph, drawn from the seed, in which
	// every node has at least Peers links).
	Topology string `toml:"topology" json:"topology"`
	// Peers is the least number of links of every node in the "random"
	// topology (0 = min(DefaultPeers, other nodes)).
	Peers int `toml:"peers" json:"peers,omitempty"`
	// M is each new node's links in the "barabasi-albert" topology
	// (Whiteblock: 2, 6, 12, 16); Degree every node's links in
	// "random-regular". Other graph topologies: "line", "ring".
	M      int `toml:"m" json:"m,omitempty"`
	Degree int `toml:"degree" json:"degree,omitempty"`
	// Delay is a one-way delay added to every link ("100ms"), on top of
	// the zone delay when zones are set.
	Delay string `toml:"delay" json:"delay,omitempty"`

	// Zones is a built-in zone set name ("aws") or the path of a CSV matrix
	// of one-way delays in ms ("" = no latency emulation).
	Zones string `toml:"zones" json:"zones"`
	// Jitter is a fraction of the one-way delay ("5%") or a duration ("2ms").
	Jitter string `toml:"jitter" json:"jitter"`
	// Loss is the packet loss probability on every link ("0.1%").
	Loss string `toml:"loss" json:"loss"`
	// Bandwidth is every node's egress rate ("10mbit"); "" = unlimited.
	Bandwidth string `toml:"bandwidth" json:"bandwidth"`
	// Linkem picks the link-emulation backend: "auto", "netem", "userspace",
	// "agent" (an NFQUEUE agent beside each node: swarm).
	Linkem string `toml:"linkem" json:"linkem"`
	// TimeScale runs the testnet in slow motion: every consensus timeout
	// of every node (its release's default or the manifest's value) is
	// multiplied by it, so a testnet too large for its machines still
	// reaches consensus; reports say so. 0 or 1 = real time.
	TimeScale float64 `toml:"time_scale" json:"time_scale,omitempty"`
}

// Group is one [node.<name>] table: Count identical nodes.
type Group struct {
	Count int `toml:"count" json:"count"`
	// Kind is what the nodes run: "cometbft" (default) or "gossipsub"
	// (benchnet's own libp2p host).
	Kind string `toml:"kind" json:"kind"`
	// Role is validator, full or seed; default: the group's name when it is
	// one of those, else validator.
	Role string `toml:"role" json:"role"`
	// Release is NAME@VERSION, e.g. cometbft@v1.0.1.
	Release string `toml:"release" json:"release"`
	// Zone places every node of the group in one zone; Zones spreads them
	// round-robin over several. A free-form label unless [network].zones is
	// set; then it must be a zone of that set, or "random": each node gets a
	// zone of the set drawn from the seed.
	Zone  string   `toml:"zone" json:"zone"`
	Zones []string `toml:"zones" json:"zones"`
	// App is "kvstore" (in-process), "kvstore-socket" (abci-cli kvstore as a
	// separate process over TCP) or "accounts" (benchnet's accounts app over
	// TCP, docs/accounts.md; ABCI 2.0 releases only).
	App string `toml:"app" json:"app"`
	// AppMempool makes the accounts app hold future sequences and order
	// each sender's txs in PrepareProposal (an app-side nonce queue);
	// false rejects them in CheckTx, like a Cosmos SDK ante handler.
	AppMempool bool `toml:"app_mempool" json:"app_mempool"`
	// Transport is the nodes' p2p stack: "comet" (CometBFT's own, the
	// default when empty) or "libp2p" (go-libp2p over QUIC, cometbft
	// v0.40.0 and later; transport.go).
	Transport string `toml:"transport" json:"transport,omitempty"`
	// Mempool is where the node's mempool lives: "flood" (CometBFT's, the
	// default when empty) or "app" (cometbft v0.40's app-side mempool, the
	// accounts app keeping the txs; mempool.go).
	Mempool string `toml:"mempool" json:"mempool,omitempty"`
	// StartDelay starts the group this long after the others were started.
	StartDelay rundir.Duration `toml:"start_delay" json:"start_delay"`
	// Config overrides the node's config.toml by dotted key
	// ("mempool.size" = 10000, "log_level" = "error").
	Config map[string]any `toml:"config" json:"config"`
}

// Load is the [load] table: the open-loop workload of `benchnet run`.
type Load struct {
	// Rate is tx/s per connection; Connections the number of connections
	// per target node (the QA method's c × r).
	Rate        float64         `toml:"rate" json:"rate"`
	Connections int             `toml:"connections" json:"connections"`
	Duration    rundir.Duration `toml:"duration" json:"duration"`
	// Count, when set, is the exact number of txs (overrides Duration).
	Count int `toml:"count" json:"count"`
	// Size is the exact byte size of every tx.
	Size int `toml:"size" json:"size"`
	// Shape is "constant" or "ramp" (linear from RampFrom to Rate).
	Shape    string  `toml:"shape" json:"shape"`
	RampFrom float64 `toml:"ramp_from" json:"ramp_from"`
	// Target is "round-robin" (connections spread over validators), "all"
	// (c connections to every validator) or "single" (first validator).
	Target string `toml:"target" json:"target"`
	// Transport is "websocket" or "http"; Method "async" or "sync".
	Transport string `toml:"transport" json:"transport"`
	Method    string `toml:"method" json:"method"`
	// Format is "kv" (our payload) or "loadtime" (CometBFT's test/loadtime).
	Format string `toml:"format" json:"format"`
	// Keys is "unique" (one key per tx) or "fixed" (every tx writes one key).
	Keys string `toml:"keys" json:"keys"`
	// Warmup is how long the warm-up may take at most.
	Warmup rundir.Duration `toml:"warmup" json:"warmup"`
	// Grace is how long to wait for mempools to drain after the last send.
	Grace rundir.Duration `toml:"grace" json:"grace"`
	// LatencyBlock is "H" (header time of the committing block) or "H+1"
	// (as CometBFT's loadtime report does).
	LatencyBlock string `toml:"latency_block" json:"latency_block"`

	// Workload is "kv" (the payload formats above) or "accounts": signed
	// txs of Accounts accounts, TxsPerAccount each, one connection per
	// account at Rate tx/s, in Order ("sequential" or "out-of-order"),
	// transfers or, with WriteKeys > 0, writes of that many distinct keys
	// (accounts.go, docs/accounts.md).
	Workload      string `toml:"workload" json:"workload,omitempty"`
	Accounts      int    `toml:"accounts" json:"accounts,omitempty"`
	TxsPerAccount int    `toml:"txs_per_account" json:"txs_per_account,omitempty"`
	Order         string `toml:"order" json:"order,omitempty"`
	WriteKeys     int    `toml:"write_keys" json:"write_keys,omitempty"`
}

// ZoneNames returns the zones of the [network].zones set (nil when none).
func (m *Manifest) ZoneNames() []string { return m.zoneNames }

// ZonesPath returns the absolute path of the zone CSV named by
// [network].zones, resolved against the manifest's directory; "" for a
// built-in set or none.
func (m *Manifest) ZonesPath() string { return m.zonesPath }

// LoadFile reads, decodes, defaults and validates the manifest at path.
func LoadFile(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return Parse(path, data)
}

// LoadCopy parses a copy of a manifest, such as a run directory's
// manifest.toml: errors name the copy, and relative paths inside it resolve
// against the directory of the original, source ("": the copy's own).
func LoadCopy(copyPath, source string) (*Manifest, error) {
	data, err := os.ReadFile(copyPath)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	dir := filepath.Dir(copyPath)
	if source != "" {
		dir = filepath.Dir(source)
	}
	return parseIn(copyPath, dir, data)
}

// Parse decodes, defaults and validates a manifest. file names it in errors.
// Every problem found is reported at once, each as file:line: field: message.
func Parse(file string, data []byte) (*Manifest, error) {
	return parseIn(file, filepath.Dir(file), data)
}

func parseIn(file, dir string, data []byte) (*Manifest, error) {
	m := &Manifest{File: file, Dir: dir, Raw: append([]byte(nil), data...), pos: scanPositions(data), perturbPos: scanPerturbPositions(data)}
	if err := m.decode(data); err != nil {
		return nil, err
	}
	m.applyDefaults()
	if errs := m.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// decode runs the TOML decoder. go-toml v2.2.3 panicked on `rate=+A0`
// (found by FuzzManifest, fixed in v2.4.x); should a decoder bug come back,
// the user still gets an error with a line instead of a crash.
func (m *Manifest) decode(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Errors{{File: m.File, Line: 1, Msg: fmt.Sprintf("%s: %v", DecoderPanic, r)}}
		}
	}()
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = withoutClaimed(dec.Decode(m)) // a kind's own table is its schema's to decode
	var strict *toml.StrictMissingError
	if err != nil && !errors.As(err, &strict) {
		return m.decodeError(err)
	}
	// Unknown keys only (or none): the rest was decoded, so the kind's
	// own tables are decoded too and every unknown key is reported at once.
	var errs Errors
	if err != nil {
		errs, _ = m.decodeError(err).(Errors)
	}
	if err := m.decodeKindTables(data); err != nil {
		kerrs, ok := err.(Errors)
		if !ok {
			return err
		}
		errs = append(errs, kerrs...)
		slices.SortStableFunc(errs, func(a, b *FieldError) int { return a.Line - b.Line })
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// DecoderPanic starts the message of an error that was a panic of the TOML
// decoder (a bug there, not in the manifest).
const DecoderPanic = "the TOML decoder failed on this file (please report it)"

// decodeError turns go-toml's errors into FieldErrors with file:line.
func (m *Manifest) decodeError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var errs Errors
		for _, e := range strict.Errors {
			line, _ := e.Position()
			errs = append(errs, &FieldError{File: m.File, Line: max(line, 1), Field: joinKey(e.Key()), Msg: "unknown key"})
		}
		return errs
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		field := joinKey(de.Key())
		if field == "" {
			field = m.pos.keyAt(line)
		}
		return Errors{{File: m.File, Line: max(line, 1), Field: field, Msg: strings.TrimPrefix(de.Error(), "toml: ")}}
	}
	return Errors{{File: m.File, Line: 1, Msg: err.Error()}}
}

// GroupNames returns the groups in the order they appear in the file, so the
// plan follows the user's order and stays deterministic.
func (m *Manifest) GroupNames() []string {
	return m.pos.order("node", m.Node)
}

// Line returns the line of a dotted field path, or of its closest enclosing
// table, or 0 when the field comes from a default.
func (m *Manifest) Line(field string) int { return m.pos.line(field) }

// Errorf builds a FieldError located at field's line.
func (m *Manifest) Errorf(field, format string, args ...any) *FieldError {
	line := m.pos.line(field)
	if line == 0 {
		// A field that comes from a default, in a table the file does not
		// have: the error still names a line, the top of the file.
		line = 1
	}
	return &FieldError{File: m.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}
