// Package spec is the gossipsub kind's part of the manifest: its name, the
// release its hosts run, the [gossipsub] table (the router's parameters)
// with its defaults and rules, and what the kind takes of the generic
// tables (Schema: it publishes, keeps no chain, has no use for a group's
// release, app, config, role, transport or mempool). A leaf, carried by
// the kind's descriptor: the manifest's and plan's tests link it through
// internal/kinds/kindtest without the kind's driver.
package spec

import (
	"time"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Name is the kind's name, what a group's `kind` names; Table the name of
// its own table, [gossipsub].
const (
	Name  = "gossipsub"
	Table = "gossipsub"
)

// Release is what a gossipsub node runs: benchnet's own host on the
// pinned go-libp2p-pubsub.
var Release = release.Release{Name: Name, Version: "v0.15.0"}

// Gossipsub is the [gossipsub] table: the router's parameters. Zero values
// take go-libp2p-pubsub v0.15.0's defaults (set by Defaults, so the plan
// records every value used).
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
// against the library) and the table's limits.
const (
	DefaultD             = 6
	DefaultDlo           = 5
	DefaultDhi           = 12
	DefaultDlazy         = 6
	DefaultHeartbeat     = time.Second
	DefaultOutboundQueue = 32
	DefaultValidateQueue = 32
	MaxQueue             = 1 << 20
	MaxDegree            = 1000
)

// Tables are the kind's own manifest tables, as the manifest decodes them
// and plan.json records them.
type Tables struct {
	Gossipsub Gossipsub `toml:"gossipsub" json:"gossipsub"`
}

// Schema is what the kind gives the manifest (kind.Kind.Manifest).
var Schema = manifest.Schema{
	Publishes:       true,
	NoChain:         true,
	Release:         &Release,
	GroupKeysNotFor: []string{"release", "app", "config", "role", "transport", "mempool"},
	Why:             "our own host: no release, app, config overrides, roles or transport: it always runs go-libp2p",
	Runs:            func(r caps.Record) bool { return r.GossipHosts },
	Tables:          []string{Table},
	NewTables:       func() manifest.Tables { return &Tables{} },
}

// Defaults fills in the router's parameters the file left out.
func (t *Tables) Defaults(m *manifest.Manifest) {
	g := &t.Gossipsub
	setInt := func(v *int, key string, def int) {
		if *v == 0 && !m.Has("gossipsub."+key) {
			*v = def
		}
	}
	setInt(&g.D, "d", DefaultD)
	setInt(&g.Dlo, "dlo", min(DefaultDlo, g.D))
	setInt(&g.Dhi, "dhi", max(DefaultDhi, g.D))
	setInt(&g.Dlazy, "dlazy", DefaultDlazy)
	setInt(&g.OutboundQueue, "outbound_queue", DefaultOutboundQueue)
	setInt(&g.ValidateQueue, "validate_queue", DefaultValidateQueue)
	if g.Heartbeat.Duration == 0 && !m.Has("gossipsub.heartbeat") {
		g.Heartbeat.Duration = DefaultHeartbeat
	}
}

// Validate checks the router's parameters, and the topology: the hosts
// find no peers by PEX.
func (t *Tables) Validate(m *manifest.Manifest, add func(field, format string, args ...any)) {
	if m.Network.Topology == "seeds" {
		add("network.topology", "\"seeds\" needs PEX and seed nodes: a gossipsub testnet wants \"full\", \"line\" or \"random\"")
	}
	g := t.Gossipsub
	if g.D < 2 || g.D > MaxDegree {
		add("gossipsub.d", "%d: want 2 to %d", g.D, MaxDegree)
	}
	if g.Dlo < 1 || g.Dlo > g.D {
		add("gossipsub.dlo", "%d: want 1 to d (%d)", g.Dlo, g.D)
	}
	if g.Dhi < g.D || g.Dhi > MaxDegree {
		add("gossipsub.dhi", "%d: want d (%d) to %d", g.Dhi, g.D, MaxDegree)
	}
	if g.Dlazy < 0 || g.Dlazy > MaxDegree {
		add("gossipsub.dlazy", "%d: want 0 to %d", g.Dlazy, MaxDegree)
	}
	if h := g.Heartbeat.Duration; h < 10*time.Millisecond || h > time.Minute {
		add("gossipsub.heartbeat", "%s: want 10ms to 1m", h)
	}
	for _, q := range []struct {
		field string
		n     int
	}{{"gossipsub.outbound_queue", g.OutboundQueue}, {"gossipsub.validate_queue", g.ValidateQueue}} {
		if q.n < 1 || q.n > MaxQueue {
			add(q.field, "%d: want 1 to %d", q.n, MaxQueue)
		}
	}
}
