package manifest

import "time"

// The defaults of every manifest field, in one place. docs/manifest.md lists
// them for users; keep the two in step.
const (
	DefaultSubnet      = "10.213.0.0/24"
	DefaultTopology    = "full"
	DefaultLinkem      = "auto"
	DefaultRelease     = "cometbft@v1.0.1"
	DefaultApp         = "kvstore"
	DefaultZone        = "local"
	DefaultRate        = 200.0
	DefaultConnections = 1
	DefaultDuration    = 60 * time.Second
	DefaultSize        = 1024
	DefaultShape       = "constant"
	DefaultTarget      = "round-robin"
	DefaultTransport   = "websocket"
	DefaultMethod      = "async"
	DefaultFormat      = "kv"
	DefaultKeys        = "unique"
	DefaultWarmup      = 30 * time.Second
	DefaultGrace       = 30 * time.Second
	DefaultLatencyBlk  = "H+1"
	// DefaultPeers is how many peers a node dials in the "random" topology
	// (fewer when the testnet has fewer other nodes).
	DefaultPeers = 3
)

// Roles a node can have.
var Roles = []string{"validator", "full", "seed"}

func (m *Manifest) applyDefaults() {
	m.faultDefaults()
	if m.Name == "" {
		m.Name = "testnet"
	}
	m.applyInfraDefaults()
	n := &m.Network
	setStr(&n.Subnet, DefaultSubnet)
	setStr(&n.Topology, DefaultTopology)
	setStr(&n.Linkem, DefaultLinkem)
	for name, g := range m.Node {
		if g == nil {
			g = &Group{}
			m.Node[name] = g
		}
		if g.Role == "" {
			g.Role = "validator"
			for _, r := range Roles {
				if name == r {
					g.Role = r
				}
			}
		}
		setStr(&g.Release, DefaultRelease)
		setStr(&g.App, DefaultApp)
		setStr(&g.Transport, TransportComet)
		if g.Mempool == MempoolFlood {
			// The default is kept empty (omitted from the canonical
			// form), so every manifest from before the key keeps its
			// testbed hash, written "flood" or not.
			g.Mempool = ""
		}
		if g.Zone == "" && len(g.Zones) == 0 {
			g.Zone = DefaultZone
		}
	}
	l := &m.Load
	if l.Rate == 0 && !m.pos.has("load.rate") {
		l.Rate = DefaultRate
	}
	if l.Connections == 0 && !m.pos.has("load.connections") {
		l.Connections = DefaultConnections
	}
	if l.Duration.Duration == 0 && l.Count == 0 && !m.pos.has("load.duration") {
		l.Duration.Duration = DefaultDuration
	}
	if l.Size == 0 && !m.pos.has("load.size") {
		l.Size = DefaultSize
	}
	setStr(&l.Shape, DefaultShape)
	l.accountsDefaults()
	setStr(&l.Target, DefaultTarget)
	setStr(&l.Transport, DefaultTransport)
	setStr(&l.Method, DefaultMethod)
	setStr(&l.Format, DefaultFormat)
	setStr(&l.Keys, DefaultKeys)
	setStr(&l.LatencyBlock, DefaultLatencyBlk)
	if l.Warmup.Duration == 0 && !m.pos.has("load.warmup") {
		l.Warmup.Duration = DefaultWarmup
	}
	if l.Grace.Duration == 0 && !m.pos.has("load.grace") {
		l.Grace.Duration = DefaultGrace
	}
	m.applyKindDefaults()
}

func setStr(p *string, def string) {
	if *p == "" {
		*p = def
	}
}

func (p positions) has(field string) bool { _, ok := p[field]; return ok }
