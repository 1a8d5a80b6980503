package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/release"
)

// KindCometBFT is the kind of a group that names none (judge.DefaultKind).
// Every group of a testnet has the same kind (one workload drives the
// whole network).
const KindCometBFT = judge.DefaultKind

// Schema is what a node kind gives the manifest: what the kind's groups
// take of the generic tables, and the tables the kind owns, decoded
// strictly by the kind itself (as k6's executors decode their own
// configs). The zero Schema is a tx chain configured by the generic tables
// alone (CometBFT's). A kind registers it through kind.Register; the
// manifest imports no kind.
type Schema struct {
	// Publishes: the kind's workload is the [publish] table, messages its
	// nodes publish at the harness's request (its driver is a
	// node.Publisher), not [load]'s txs.
	Publishes bool
	// NoChain: its nodes keep no chain, so a testnet needs no validators
	// and takes no halt_limit, [rotate] or wipe-restart.
	NoChain bool
	// Release, when set, is what every node of the kind runs: its groups
	// name no release and none is checked.
	Release *release.Release
	// GroupKeysNotFor are keys of [node.<group>] the kind has no use for,
	// refused at their line ("does not apply to kind = …", then Why).
	GroupKeysNotFor []string
	Why             string
	// Runs reports whether a runner can host the kind's nodes; nil: every
	// runner can.
	Runs func(caps.Record) bool
	// Tables names the top-level tables the kind owns; NewTables makes
	// the value they are decoded into.
	Tables    []string
	NewTables func() Tables
}

// Tables is a kind's own manifest tables: a pointer to a struct with one
// toml-tagged field per table (`toml:"gossipsub"`), into which the file
// is decoded strictly, so an unknown key or a wrong type there is an
// error at its line like any other. plan.json records it as JSON (its
// json tags), each table under its name.
type Tables interface {
	// Defaults fills in what the file left out (m.Has tells a key the
	// file wrote from one it left out).
	Defaults(m *Manifest)
	// Validate reports the tables' problems, and the kind's rules about
	// the rest of the manifest, each by its dotted field; the manifest
	// adds the file and line.
	Validate(m *Manifest, add func(field, format string, args ...any))
}

// kinds are the node kinds this binary links, with their schemas: each
// kind registers them from the leaf package of its manifest part, so a new
// kind adds no name here.
var kinds = registry.New[Schema]("node kind")

// RegisterKind makes name a kind a group may name, with its schema (from
// the kind's init, through kind.Register).
func RegisterKind(name string, s Schema) { kinds.Register(name, s) }

// Kinds are the node kinds a group may name: the registered ones, and
// always KindCometBFT, the kind of a group that names none (so a binary
// or test that links no kind still reads a plain manifest).
func Kinds() []string {
	names := kinds.Names()
	if !slices.Contains(names, KindCometBFT) {
		names = append([]string{KindCometBFT}, names...)
		slices.Sort(names)
	}
	return names
}

// SchemaOf is kind's schema; the zero Schema for a kind not registered
// (the default kind in a binary that links none).
func SchemaOf(kind string) Schema {
	s, _ := kinds.Get(judge.NodeKind(kind))
	return s
}

// PublishingKinds are the registered kinds whose workload is [publish].
func PublishingKinds() []string {
	var out []string
	for _, name := range kinds.Names() {
		if s, _ := kinds.Get(name); s.Publishes {
			out = append(out, name)
		}
	}
	return out
}

// Kind is the testnet's node kind: its groups' (validation refuses mixed
// kinds), cometbft when it has none.
func (m *Manifest) Kind() string {
	for _, name := range m.GroupNames() {
		if g := m.Node[name]; g != nil && g.Kind != "" {
			return g.Kind
		}
	}
	return judge.NodeKind("")
}

// Schema is the schema of the testnet's kind.
func (m *Manifest) Schema() Schema { return SchemaOf(m.Kind()) }

// Publishes reports whether the testnet's workload is its [publish] table
// (messages its hosts publish) rather than [load] (txs), as its kind
// declares: the flags that override a workload go to the one it has.
func (m *Manifest) Publishes() bool { return m.Schema().Publishes }

// KindTables are the testnet's kind's own tables, decoded, defaulted and
// validated; nil for a kind that owns none.
func (m *Manifest) KindTables() Tables { return m.tables }

// claimed reports whether a decoded key lies in a table some registered
// kind owns: the manifest's own strict decode leaves those to the kind.
func claimed(key []string) bool {
	if len(key) == 0 {
		return false
	}
	for _, name := range kinds.Names() {
		if s, _ := kinds.Get(name); slices.Contains(s.Tables, key[0]) {
			return true
		}
	}
	return false
}

// decodeKindTables decodes the file's tables that the testnet's kind owns
// into its Tables value, strictly: the whole file is decoded into it, and
// of the keys it does not know only those inside its own tables are
// errors (the rest are the manifest's), so every error has its real line.
func (m *Manifest) decodeKindTables(data []byte) (err error) {
	s := m.Schema()
	if s.NewTables == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = Errors{{File: m.File, Line: 1, Msg: fmt.Sprintf("%s: %v", DecoderPanic, r)}}
		}
	}()
	t, err := decodeOwnTables(s, data)
	if err != nil {
		return m.decodeError(err)
	}
	m.tables = t
	return nil
}

// decodeOwnTables decodes the tables of data that s owns into a new
// value, strictly; the error is go-toml's, for the caller to locate.
func decodeOwnTables(s Schema, data []byte) (Tables, error) {
	t := s.NewTables()
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(t); err != nil {
		var strict *toml.StrictMissingError
		if !errors.As(err, &strict) {
			return nil, err
		}
		strict.Errors = slices.DeleteFunc(strict.Errors, func(e toml.DecodeError) bool {
			k := e.Key()
			return len(k) == 0 || !slices.Contains(s.Tables, k[0])
		})
		if len(strict.Errors) > 0 {
			return nil, strict
		}
	}
	return t, nil
}

// withoutClaimed drops from a strict decode's error the keys inside a
// kind's own table (its schema decodes them): nil when none is left.
func withoutClaimed(err error) error {
	var strict *toml.StrictMissingError
	if !errors.As(err, &strict) {
		return err
	}
	strict.Errors = slices.DeleteFunc(strict.Errors, func(e toml.DecodeError) bool { return claimed(e.Key()) })
	if len(strict.Errors) == 0 {
		return nil
	}
	return strict
}

// applyKindDefaults fills in the workload and the own tables of the
// testnet's kind (a CometBFT manifest keeps [publish] empty, so its plan
// does not change).
func (m *Manifest) applyKindDefaults() {
	for _, g := range m.Node {
		if g != nil {
			g.Kind = judge.NodeKind(g.Kind)
		}
	}
	s := m.Schema()
	if s.Publishes {
		m.publishDefaults()
	}
	if s.NewTables != nil {
		if m.tables == nil { // a manifest built in code, not parsed
			m.tables = s.NewTables()
		}
		m.tables.Defaults(m)
	}
}

// validateKinds checks the kind of every group, the keys and tables that
// belong to another kind, and the testnet's kind's workload and tables.
// It returns the testnet's kind's schema.
func (m *Manifest) validateKinds(add func(string, string, ...any)) Schema {
	kind, known := "", Kinds()
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name
		if !slices.Contains(known, g.Kind) {
			add(f+".kind", "%q: want one of %s", g.Kind, strings.Join(known, ", "))
			continue
		}
		switch {
		case kind == "":
			kind = g.Kind
		case g.Kind != kind:
			add(f+".kind", "%q, but another group is %q: every group of a testnet has the same kind", g.Kind, kind)
		}
		s := SchemaOf(g.Kind)
		for _, k := range s.GroupKeysNotFor {
			if m.pos.has(f + "." + k) {
				add(f+"."+k, "does not apply to kind = %q (%s)", g.Kind, s.Why)
			}
		}
	}
	s := SchemaOf(kind)
	if !s.Publishes && m.pos.has("publish") {
		add("publish", "[publish] applies to kind = %s groups only", strings.Join(quoteEach(PublishingKinds()), " or "))
	}
	for _, other := range kinds.Names() {
		if other == judge.NodeKind(kind) {
			continue
		}
		o, _ := kinds.Get(other)
		for _, t := range o.Tables {
			if m.pos.has(t) {
				add(t, "[%s] applies to kind = %q groups only", t, other)
			}
		}
	}
	if s.Publishes {
		if m.pos.has("load") {
			add("load", "[load] is the CometBFT tx load; a %s testnet takes [publish]", kind)
		}
		for _, e := range CheckPublish(m.Publish) {
			add(e.Field, "%s", e.Msg)
		}
		m.validateSource(add)
	}
	if m.tables != nil {
		m.tables.Validate(m, add)
	}
	return s
}
