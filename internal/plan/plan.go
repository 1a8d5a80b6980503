// Package plan resolves a manifest into a concrete testnet: every node's name,
// role, zone, address, ports, peers, binary and config overrides. The result
// is a pure, deterministic function of the manifest (same manifest and seed,
// same plan); runners and drivers only read it.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/topology"
)

// Default ports: every node is its own host, so every node uses the same ones.
const (
	P2PPort        = 26656
	RPCPort        = 26657
	ABCIPort       = 26658
	PrometheusPort = 26660
)

// Testnet is a resolved manifest.
type Testnet struct {
	Name     string           `json:"name"`
	Seed     int64            `json:"seed"`
	Subnet   netip.Prefix     `json:"subnet"`
	Gateway  netip.Addr       `json:"gateway"` // the harness's address on the testnet's bridge
	Topology string           `json:"topology"`
	Network  manifest.Network `json:"network"`
	Nodes    []*Node          `json:"nodes"`
	Load     manifest.Load    `json:"load"`
	// Kind is the nodes' kind (manifest.Kind*); "" is cometbft, so the
	// plans of CometBFT testnets read as before.
	Kind string `json:"kind,omitempty"`
	// Publish is a publishing kind's workload (manifest.Schema.Publishes),
	// every default filled in.
	Publish *manifest.Publish `json:"publish,omitempty"`
	// Tables are the kind's own manifest tables (manifest.KindTables),
	// every default filled in, as JSON by table name: plan.json writes
	// each under its name here, between publish and the fields below
	// (tables.go). The kind reads them with KindTables.
	Tables map[string]json.RawMessage `json:"-"`
	// Edges is the undirected graph of a graph topology (line, ring,
	// random-regular, barabasi-albert: internal/topology), node indices
	// i < j, sorted; each edge is dialed by its lower node, which lists the
	// other in PersistentPeers. Empty for full, seeds and random.
	Edges [][2]int `json:"edges,omitempty"`
	// Genesis holds the manifest's genesis.json overrides by dotted key.
	Genesis map[string]any `json:"genesis,omitempty"`
	// Sources is where each release came from, by Release.String():
	// provenance "key: value" lines from the reference check (module and
	// version, or a tree's revision, dirty flag and content hash).
	Sources map[string][]string `json:"sources,omitempty"`
}

// NodeKind is the testnet's node kind, cometbft when unset.
func (t *Testnet) NodeKind() string { return judge.NodeKind(t.Kind) }

// Node is one resolved node.
type Node struct {
	Name    string          `json:"name"`
	Index   int             `json:"index"` // position in Testnet.Nodes
	Group   string          `json:"group"`
	Role    string          `json:"role"`
	Zone    string          `json:"zone"`
	Release release.Release `json:"release"`
	// Ref is the release reference as the manifest wrote it.
	Ref string `json:"ref,omitempty"`
	App string `json:"app"`
	// AppMempool: the accounts app holds future sequences (app_mempool).
	AppMempool bool `json:"app_mempool,omitempty"`
	// Transport is "libp2p" for a go-libp2p node; empty is CometBFT's own
	// p2p (manifest.TransportComet).
	Transport string `json:"transport,omitempty"`
	// Mempool is "app" for cometbft v0.40's app-side mempool, the app
	// keeping the txs; empty is CometBFT's own (manifest.MempoolFlood).
	Mempool string     `json:"mempool,omitempty"`
	Addr    netip.Addr `json:"addr"`
	// Host is the name peers dial instead of Addr, for runners that cannot
	// give a node a fixed address (caps.Record.PeersByName: a swarm
	// service's DNS alias, the node's name); empty otherwise. Resolved with
	// the rest: the testnet checks the runner agrees, never rewrites it.
	Host string `json:"host,omitempty"`
	// Ports on Addr (ABCI listens on the node's loopback).
	P2PPort        int `json:"p2p_port"`
	RPCPort        int `json:"rpc_port"`
	ABCIPort       int `json:"abci_port"`
	PrometheusPort int `json:"prometheus_port"`
	// PersistentPeers and Seeds name other nodes of the testnet.
	PersistentPeers []string      `json:"persistent_peers"`
	Seeds           []string      `json:"seeds"`
	StartDelay      time.Duration `json:"start_delay"`
	// Config holds the manifest's overrides by dotted key.
	Config map[string]any `json:"config,omitempty"`
	// MetricsNamespace prefixes the node's Prometheus series
	// (NAMESPACE_consensus_height): the flavour's default ("cometbft",
	// "tendermint") or the instrumentation.namespace override. Empty for
	// nodes without those series (gossipsub) and in plans written before
	// it existed: read it through Namespace.
	MetricsNamespace string `json:"metrics_namespace,omitempty"`
	// RPCReach and MetricsReach are host:port where the harness reaches the
	// node when its runner reports them (a swarm's published ports); empty
	// means Addr. Set at every start (a restarted task may be published on
	// other ports) through SetReach, read through RPCURL and MetricsURL,
	// which the collectors and pollers call each time; state.json records
	// them.
	RPCReach     string `json:"-"`
	MetricsReach string `json:"-"`
}

// DefaultNamespace is the metrics namespace of nodes whose plan does not
// record one: every plan before the field existed ran CometBFT.
const DefaultNamespace = "cometbft"

// Namespace is the prefix of the node's Prometheus series.
func (n *Node) Namespace() string {
	if n.MetricsNamespace == "" {
		return DefaultNamespace
	}
	return n.MetricsNamespace
}

// metricsNamespace is what a node of release rel with config overrides cfg
// exports its series under: the override, else the flavour's own default
// (CometBFT "cometbft", Tendermint Core "tendermint"; both set
// [instrumentation] namespace in config.toml to it).
func metricsNamespace(rel release.Release, cfg map[string]any) string {
	if s, ok := cfg[manifest.NamespaceKey].(string); ok && s != "" {
		return s
	}
	if rel.Name == "tendermint" {
		return "tendermint"
	}
	return DefaultNamespace
}

// P2PAddr is host:port where peers dial the node.
func (n *Node) P2PAddr() string {
	if n.Host != "" {
		return net.JoinHostPort(n.Host, strconv.Itoa(n.P2PPort))
	}
	return netip.AddrPortFrom(n.Addr, uint16(n.P2PPort)).String()
}

// reachMu guards every node's RPCReach and MetricsReach: a start sets
// them while the collector and the pollers read them.
var reachMu sync.RWMutex

// SetReach sets where the harness reaches the node ("" keeps that one).
func (n *Node) SetReach(rpc, metrics string) {
	reachMu.Lock()
	defer reachMu.Unlock()
	if rpc != "" {
		n.RPCReach = rpc
	}
	if metrics != "" {
		n.MetricsReach = metrics
	}
}

// RPCURL is the node's CometBFT RPC endpoint as seen from the harness.
func (n *Node) RPCURL() string {
	reachMu.RLock()
	reach := n.RPCReach
	reachMu.RUnlock()
	if reach != "" {
		return "http://" + reach
	}
	return "http://" + netip.AddrPortFrom(n.Addr, uint16(n.RPCPort)).String()
}

// MetricsURL is the node's Prometheus endpoint.
func (n *Node) MetricsURL() string {
	reachMu.RLock()
	reach := n.MetricsReach
	reachMu.RUnlock()
	if reach != "" {
		return "http://" + reach + "/metrics"
	}
	return "http://" + netip.AddrPortFrom(n.Addr, uint16(n.PrometheusPort)).String() + "/metrics"
}

// Resolve turns a validated manifest into a Testnet.
func Resolve(m *manifest.Manifest) (*Testnet, error) {
	prefix, err := netip.ParsePrefix(m.Network.Subnet)
	if err != nil {
		return nil, fmt.Errorf("resolve network.subnet: %w", err)
	}
	gw := prefix.Addr().Next()
	t := &Testnet{
		Name: m.Name, Seed: m.Seed, Subnet: prefix, Gateway: gw,
		Topology: m.Network.Topology, Network: m.Network, Load: m.Load,
		Genesis: m.Genesis,
	}
	// The kind is recorded unless it is the default one, which plans have
	// always left out ("" reads as cometbft), so every later stage learns
	// it from plan.json.
	if k := m.Kind(); k != manifest.KindCometBFT {
		t.Kind = k
	}
	schema := m.Schema()
	if schema.Publishes {
		pub := m.Publish
		t.Publish = &pub
	}
	if err := t.SetKindTables(m.KindTables()); err != nil {
		return nil, err
	}
	if p := m.ZonesPath(); p != "" {
		// The emulator opens the CSV the manifest named, from wherever it runs.
		t.Network.Zones = p
	}
	// Every random choice comes from this one stream, drawn in a fixed order
	// (zones in node order, then peers), so a manifest and its seed give
	// the same plan byte for byte. PCG's output is specified by math/rand/v2.
	rng := rand.New(rand.NewPCG(uint64(m.Seed), 0x62656e63686e6574)) // "benchnet"
	zoneSet := m.ZoneNames()
	rc, _ := caps.Of(m.Infra.Runner)
	addr := gw
	for _, gname := range m.GroupNames() {
		g := m.Node[gname]
		var rel release.Release
		app, ref, transport, mempool, namespace := "", "", "", "", ""
		if schema.Release != nil { // the kind runs one release of its own (no metrics namespace)
			rel = *schema.Release
		} else {
			if manifest.TransportOf(g) == manifest.TransportLibp2p {
				transport = manifest.TransportLibp2p
			}
			if manifest.MempoolOf(g) == manifest.MempoolApp && g.Role != "seed" {
				mempool = manifest.MempoolApp
			}
			var err error
			if rel, err = m.ReleaseOf(g.Release); err != nil {
				return nil, fmt.Errorf("resolve node.%s.release: %w", gname, err)
			}
			app, ref = g.App, g.Release
			namespace = metricsNamespace(rel, g.Config)
			if info := m.ReleaseInfo[g.Release]; len(info) > 0 {
				if t.Sources == nil {
					t.Sources = map[string][]string{}
				}
				if _, ok := t.Sources[rel.String()]; !ok {
					t.Sources[rel.String()] = info
				}
			}
		}
		for i := 0; i < g.Count; i++ {
			addr = addr.Next()
			if !prefix.Contains(addr) {
				return nil, fmt.Errorf("resolve: subnet %s has no address left for %s%d", prefix, gname, i)
			}
			zone := g.Zone
			switch {
			case len(g.Zones) > 0:
				zone = g.Zones[i%len(g.Zones)]
			case zone == manifest.RandomZone:
				if len(zoneSet) == 0 {
					return nil, fmt.Errorf("resolve node.%s.zone: \"random\" without a zone set", gname)
				}
				zone = zoneSet[rng.IntN(len(zoneSet))]
			}
			name := gname + strconv.Itoa(i)
			host := ""
			if rc.PeersByName {
				host = name
			}
			t.Nodes = append(t.Nodes, &Node{
				Name: name, Host: host, Index: len(t.Nodes), Group: gname, Role: g.Role,
				Zone: zone, Release: rel, Ref: ref, App: app, AppMempool: g.AppMempool, Transport: transport, Mempool: mempool, Addr: addr,
				P2PPort: P2PPort, RPCPort: RPCPort, ABCIPort: ABCIPort, PrometheusPort: PrometheusPort,
				StartDelay: g.StartDelay.Duration, Config: g.Config,
				MetricsNamespace: namespace,
			})
		}
	}
	if err := t.connect(rng); err != nil {
		return nil, err
	}
	return t, nil
}

// connect fills in peers by topology.
func (t *Testnet) connect(rng *rand.Rand) error {
	var seeds []string
	for _, n := range t.Nodes {
		if n.Role == "seed" {
			seeds = append(seeds, n.Name)
		}
	}
	for _, n := range t.Nodes {
		n.PersistentPeers, n.Seeds = []string{}, []string{}
		switch {
		case t.Topology == "full":
			for _, p := range t.Nodes {
				if p != n {
					n.PersistentPeers = append(n.PersistentPeers, p.Name)
				}
			}
		case n.Role == "seed":
			// Seeds know each other; they crawl the rest through PEX.
			for _, s := range seeds {
				if s != n.Name {
					n.Seeds = append(n.Seeds, s)
				}
			}
		default:
			n.Seeds = append(n.Seeds, seeds...)
		}
	}
	if t.Topology == "random" {
		// Validation refuses seed nodes here: PEX is off.
		peers := t.Nodes
		k := t.Network.Peers
		if k == 0 {
			k = min(manifest.DefaultPeers, len(peers)-1)
		}
		for i, dials := range RandomDials(len(peers), k, rng) {
			for _, j := range dials {
				peers[i].PersistentPeers = append(peers[i].PersistentPeers, peers[j].Name)
			}
		}
	}
	if manifest.IsGraphTopology(t.Topology) {
		// Drawn from the seed alone, not the zone stream above, so the
		// graph of a manifest depends only on its seed, topology and size.
		spec := topology.Spec{Kind: t.Topology, M: t.Network.M, Degree: t.Network.Degree}
		edges, err := topology.Edges(spec, len(t.Nodes), uint64(t.Seed))
		if err != nil {
			return fmt.Errorf("resolve network.topology: %w", err)
		}
		t.Edges = edges
		for _, e := range edges {
			a := t.Nodes[e[0]]
			a.PersistentPeers = append(a.PersistentPeers, t.Nodes[e[1]].Name)
		}
	}
	return nil
}

// RandomDials builds a random graph of n nodes in which every node has at
// least k links (k <= n-1): a random path through all nodes first (so the
// graph is connected), then each node short of k links dials nodes drawn
// uniformly from those not yet linked with it. A link is dialed by one side
// only, which lists the other as persistent peer; the other accepts it. The
// graph stays sparse (about n·k/2 links, against n·(n-1)/2 for "full").
// dials[i] is sorted.
func RandomDials(n, k int, rng *rand.Rand) [][]int {
	dials := make([][]int, n)
	linked := make([]map[int]bool, n)
	for i := range linked {
		linked[i] = map[int]bool{}
	}
	link := func(a, b int) {
		dials[a] = append(dials[a], b)
		linked[a][b], linked[b][a] = true, true
	}
	perm := rng.Perm(n)
	for i := 1; i < n; i++ {
		link(perm[i], perm[i-1])
	}
	for a := 0; a < n; a++ {
		for len(linked[a]) < k {
			var free []int
			for b := 0; b < n; b++ {
				if b != a && !linked[a][b] {
					free = append(free, b)
				}
			}
			if len(free) == 0 {
				break
			}
			link(a, free[rng.IntN(len(free))])
		}
	}
	for a := range dials {
		sort.Ints(dials[a])
	}
	return dials
}

// Neighbours returns the names of every node linked with name, whichever
// side dials (it lists the other, or the other lists it), in plan order.
func (t *Testnet) Neighbours(name string) []string {
	linked := map[string]bool{}
	for _, n := range t.Nodes {
		for _, p := range n.PersistentPeers {
			if n.Name == name {
				linked[p] = true
			}
			if p == name {
				linked[n.Name] = true
			}
		}
	}
	var out []string
	for _, n := range t.Nodes {
		if linked[n.Name] {
			out = append(out, n.Name)
		}
	}
	return out
}

// Validators returns the validator nodes in plan order.
func (t *Testnet) Validators() []*Node { return t.ByRole("validator") }

// ByRole returns the nodes of one role in plan order.
func (t *Testnet) ByRole(role string) []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.Role == role {
			out = append(out, n)
		}
	}
	return out
}

// Node returns the node called name, or nil.
func (t *Testnet) Node(name string) *Node {
	for _, n := range t.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Releases returns the distinct releases the testnet runs, sorted.
func (t *Testnet) Releases() []release.Release {
	seen := map[release.Release]bool{}
	var out []release.Release
	for _, n := range t.Nodes {
		if !seen[n.Release] {
			seen[n.Release] = true
			out = append(out, n.Release)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// JSON renders the plan for `benchnet plan --json` and the run directory.
func (t *Testnet) JSON() ([]byte, error) { return json.MarshalIndent(t, "", "  ") }

// Read is the one reader of a run directory's plan.json (written once, by
// the testnet): the plan in dir, an error wrapping fs.ErrNotExist when dir
// has none.
func Read(dir string) (*Testnet, error) {
	path := filepath.Join(dir, rundir.Plan)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ReadJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// RunKind is a run directory's node kind, the one way every command learns
// it: plan.json's "kind"; a plan without one (written before kinds were
// recorded) is a CometBFT run unless the directory has published.csv (a
// gossip run).
func RunKind(dir string) (string, error) {
	t, err := Read(dir)
	switch {
	case err == nil:
		if t.Kind != "" {
			return t.Kind, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if pub := manifest.PublishingKinds(); len(pub) == 1 {
		if _, err := os.Stat(filepath.Join(dir, rundir.PublishedCSV.Name)); err == nil {
			return pub[0], nil // the one kind that publishes (gossipsub)
		}
	}
	return judge.DefaultKind, nil // a run from before plan.json recorded its kind
}

// ReadJSON reads a plan written by JSON.
func ReadJSON(data []byte) (*Testnet, error) {
	var t Testnet
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	return &t, nil
}
