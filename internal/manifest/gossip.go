package manifest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Node kinds: what a group's nodes run. Every group of a testnet has the
// same kind (one workload drives the whole network).
const (
	KindCometBFT  = judge.DefaultKind
	KindGossipsub = "gossipsub"
)

// kinds are the node kinds this binary links: each kind registers its
// name from the leaf package that also holds its metric tables
// (internal/kinds/<kind>/metrics), so a new kind adds no name here.
var kinds = registry.New[struct{}]("node kind")

// RegisterKind makes name a kind a group may name (from the kind's init).
func RegisterKind(name string) { kinds.Register(name, struct{}{}) }

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

// Publish is the [publish] table: the gossip lab's workload. The harness
// asks hosts to publish Count messages network-wide at Rate, message i at
// t0 + i/Rate, each from a publisher drawn from the seed (or Source).
type Publish struct {
	// Rate is messages/s over the whole network.
	Rate float64 `toml:"rate" json:"rate"`
	// Size is every message's byte size (the report's 1000 B by default).
	Size int `toml:"size" json:"size"`
	// Duration or Count: Count, when set, is the exact number of messages.
	Duration rundir.Duration `toml:"duration" json:"duration"`
	Count    int             `toml:"count" json:"count"`
	// Source is "random" (publisher of each message drawn from the seed)
	// or a node name ("gossip0").
	Source string `toml:"source" json:"source"`
	// Warmup is the time between every host being peered and the first
	// publish (meshes form over a few heartbeats); Cooldown the time after
	// the last publish before the hosts are stopped.
	Warmup   rundir.Duration `toml:"warmup" json:"warmup"`
	Cooldown rundir.Duration `toml:"cooldown" json:"cooldown"`
}

// Gossipsub is the [gossipsub] table: the router's parameters. Zero values
// take go-libp2p-pubsub v0.15.0's defaults (set by applyDefaults, so the
// plan records every value used).
type Gossipsub struct {
	D     int `toml:"d" json:"d"`
	Dlo   int `toml:"dlo" json:"dlo"`
	Dhi   int `toml:"dhi" json:"dhi"`
	Dlazy int `toml:"dlazy" json:"dlazy"`
	// Heartbeat is the heartbeat interval.
	Heartbeat    rundir.Duration `toml:"heartbeat" json:"heartbeat"`
	FloodPublish bool            `toml:"flood_publish" json:"flood_publish"`
	// OutboundQueue is each peer's outbound RPC queue; ValidateQueue the
	// validation pipeline's front queue. Full queues drop (the report's
	// Phase 1 losses came from queues of 32).
	OutboundQueue int `toml:"outbound_queue" json:"outbound_queue"`
	ValidateQueue int `toml:"validate_queue" json:"validate_queue"`
}

// go-libp2p-pubsub v0.15.0's defaults (internal/kinds/gossipsub checks them
// against the library) and the publish workload's.
const (
	DefaultGossipD             = 6
	DefaultGossipDlo           = 5
	DefaultGossipDhi           = 12
	DefaultGossipDlazy         = 6
	DefaultGossipHeartbeat     = time.Second
	DefaultGossipOutboundQueue = 32
	DefaultGossipValidateQueue = 32
	DefaultPublishRate         = 20.0
	DefaultPublishSize         = 1000
	DefaultPublishDuration     = 60 * time.Second
	DefaultPublishSource       = "random"
	DefaultPublishWarmup       = 5 * time.Second
	DefaultPublishCooldown     = 5 * time.Second
	// MinPublishSize holds the 16-character message ID every payload
	// starts with (the hosts' message-ID function reads it).
	MinPublishSize  = 16
	MaxPublishSize  = 1 << 20
	MaxGossipQueue  = 1 << 20
	MaxGossipDegree = 1000
)

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

// Publishes reports whether the testnet's workload is its [publish] table
// (messages its hosts publish) rather than [load] (txs): the flags that
// override a workload go to the one it has.
func (m *Manifest) Publishes() bool { return m.Kind() == KindGossipsub }

// applyGossipDefaults fills in the [publish] and [gossipsub] tables of a
// gossipsub testnet (a CometBFT manifest keeps them empty, so its plan does
// not change).
func (m *Manifest) applyGossipDefaults() {
	for _, g := range m.Node {
		if g != nil {
			g.Kind = judge.NodeKind(g.Kind)
		}
	}
	if m.Kind() != KindGossipsub {
		return
	}
	p := &m.Publish
	if p.Rate == 0 && !m.pos.has("publish.rate") {
		p.Rate = DefaultPublishRate
	}
	if p.Size == 0 && !m.pos.has("publish.size") {
		p.Size = DefaultPublishSize
	}
	if p.Duration.Duration == 0 && p.Count == 0 && !m.pos.has("publish.duration") {
		p.Duration.Duration = DefaultPublishDuration
	}
	setStr(&p.Source, DefaultPublishSource)
	if !m.pos.has("publish.warmup") {
		p.Warmup.Duration = DefaultPublishWarmup
	}
	if !m.pos.has("publish.cooldown") {
		p.Cooldown.Duration = DefaultPublishCooldown
	}
	g := &m.Gossipsub
	setInt := func(v *int, key string, def int) {
		if *v == 0 && !m.pos.has("gossipsub."+key) {
			*v = def
		}
	}
	setInt(&g.D, "d", DefaultGossipD)
	setInt(&g.Dlo, "dlo", min(DefaultGossipDlo, g.D))
	setInt(&g.Dhi, "dhi", max(DefaultGossipDhi, g.D))
	setInt(&g.Dlazy, "dlazy", DefaultGossipDlazy)
	setInt(&g.OutboundQueue, "outbound_queue", DefaultGossipOutboundQueue)
	setInt(&g.ValidateQueue, "validate_queue", DefaultGossipValidateQueue)
	if g.Heartbeat.Duration == 0 && !m.pos.has("gossipsub.heartbeat") {
		g.Heartbeat.Duration = DefaultGossipHeartbeat
	}
}

// gossipKeysNotFor are keys of a group that a gossipsub host has no use for.
var gossipKeysNotFor = []string{"release", "app", "config", "role", "transport", "mempool"}

// validateKinds checks the kind of every group and the tables that belong
// to one kind only. It returns whether the testnet is a gossipsub one.
func (m *Manifest) validateKinds(add func(string, string, ...any)) (gossip bool) {
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
		if g.Kind == KindGossipsub {
			for _, k := range gossipKeysNotFor {
				if m.pos.has(f + "." + k) {
					add(f+"."+k, "does not apply to kind = \"gossipsub\" (our own host: no release, app, config overrides, roles or transport: it always runs go-libp2p)")
				}
			}
		}
	}
	gossip = kind == KindGossipsub
	if !gossip {
		for _, t := range []string{"publish", "gossipsub"} {
			if m.pos.has(t) {
				add(t, "[%s] applies to kind = \"gossipsub\" groups only", t)
			}
		}
		return false
	}
	if m.pos.has("load") {
		add("load", "[load] is the CometBFT tx load; a gossipsub testnet takes [publish]")
	}
	if m.Network.Topology == "seeds" {
		add("network.topology", "\"seeds\" needs PEX and seed nodes: a gossipsub testnet wants \"full\", \"line\" or \"random\"")
	}
	for _, e := range CheckPublish(m.Publish) {
		add(e.Field, "%s", e.Msg)
	}
	m.validateSource(add)
	m.validateGossipsub(add)
	return true
}

// CheckPublish is the [publish] table's rules, without file or line (as
// CheckLoad): Validate locates them; internal/load calls it for a config
// built in code.
func CheckPublish(p Publish) []*FieldError {
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	rateOK := p.Rate > 0 && p.Rate <= MaxRate
	if !rateOK {
		add("publish.rate", "must be positive (messages/s over the network), at most %v, got %v", MaxRate, p.Rate)
	}
	if p.Size < MinPublishSize || p.Size > MaxPublishSize {
		add("publish.size", "%d bytes: want %d to %d (a message starts with its 16-character ID)", p.Size, MinPublishSize, MaxPublishSize)
	}
	durOK := p.Duration.Duration >= 0 && p.Duration.Duration <= MaxDuration
	if !durOK {
		add("publish.duration", "%s: want 0 to %s", p.Duration.Duration, MaxDuration)
	}
	switch {
	case p.Count < 0 || p.Count > MaxTxs:
		add("publish.count", "must be 0 to %d, got %d", MaxTxs, p.Count)
	case p.Count == 0 && p.Duration.Duration <= 0 && durOK:
		add("publish.duration", "set a positive duration or count")
	case p.Count == 0 && rateOK && durOK && math.Ceil(p.Rate*p.Duration.Seconds()) > MaxTxs:
		add("publish.duration", "rate × duration is %.0f messages, more than the %d one run may publish", math.Ceil(p.Rate*p.Duration.Seconds()), MaxTxs)
	}
	for _, w := range []struct {
		field string
		d     time.Duration
	}{{"publish.warmup", p.Warmup.Duration}, {"publish.cooldown", p.Cooldown.Duration}} {
		if w.d < 0 || w.d > MaxWait {
			add(w.field, "%s: want 0 to %s", w.d, MaxWait)
		}
	}
	return errs
}

// validateSource checks that a fixed publisher is a node of the plan
// (groups' nodes are named group + index).
func (m *Manifest) validateSource(add func(string, string, ...any)) {
	src := m.Publish.Source
	if src == "random" {
		return
	}
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		for i := 0; i < min(g.Count, MaxNodes); i++ {
			if src == fmt.Sprintf("%s%d", name, i) {
				return
			}
		}
	}
	add("publish.source", "%q: want \"random\" or a node of the testnet (e.g. %q)", src, m.firstNode())
}

func (m *Manifest) firstNode() string {
	if names := m.GroupNames(); len(names) > 0 {
		return names[0] + "0"
	}
	return "gossip0"
}

func (m *Manifest) validateGossipsub(add func(string, string, ...any)) {
	g := m.Gossipsub
	if g.D < 2 || g.D > MaxGossipDegree {
		add("gossipsub.d", "%d: want 2 to %d", g.D, MaxGossipDegree)
	}
	if g.Dlo < 1 || g.Dlo > g.D {
		add("gossipsub.dlo", "%d: want 1 to d (%d)", g.Dlo, g.D)
	}
	if g.Dhi < g.D || g.Dhi > MaxGossipDegree {
		add("gossipsub.dhi", "%d: want d (%d) to %d", g.Dhi, g.D, MaxGossipDegree)
	}
	if g.Dlazy < 0 || g.Dlazy > MaxGossipDegree {
		add("gossipsub.dlazy", "%d: want 0 to %d", g.Dlazy, MaxGossipDegree)
	}
	if h := g.Heartbeat.Duration; h < 10*time.Millisecond || h > time.Minute {
		add("gossipsub.heartbeat", "%s: want 10ms to 1m", h)
	}
	for _, q := range []struct {
		field string
		n     int
	}{{"gossipsub.outbound_queue", g.OutboundQueue}, {"gossipsub.validate_queue", g.ValidateQueue}} {
		if q.n < 1 || q.n > MaxGossipQueue {
			add(q.field, "%d: want 1 to %d", q.n, MaxGossipQueue)
		}
	}
}
