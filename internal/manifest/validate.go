package manifest

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/benchnet/benchnet/internal/release"
)

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	groupRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)
)

// ParseRelease splits a tag reference, "cometbft@v1.0.1", into its name
// and version; ok is false for anything else (internal/release has the
// whole grammar).
func ParseRelease(s string) (name, version string, ok bool) {
	ref, err := release.Parse(s)
	if err != nil || ref.Kind != release.Tag {
		return "", "", false
	}
	return ref.Name, ref.Version, true
}

// ReleaseSupported refuses the versions of a flavour benchnet cannot run:
// Tendermint Core after v0.34 changed the CLI, config and home layout the
// node driver reads.
func ReleaseSupported(name, version string) error {
	if name == "tendermint" && !strings.HasPrefix(version, "v0.34.") {
		return errors.New("benchnet runs Tendermint Core v0.34.x only (tags up to v0.34.24; later v0.34 releases are cometbft@v0.34.x)")
	}
	return nil
}

// Validate checks the defaulted manifest and returns every problem found.
// It is the one place the rules live: flags that override the manifest are
// copied in and checked by calling Validate again; the load and link
// emulation packages trust what passed.
func (m *Manifest) Validate() Errors {
	var errs Errors
	add := func(field, format string, args ...any) { errs = append(errs, m.Errorf(field, format, args...)) }

	if !nameRE.MatchString(m.Name) {
		add("name", "%q must be 1-32 lowercase letters, digits or '-'", m.Name)
	}

	nw := &m.Network
	prefix, err := netip.ParsePrefix(nw.Subnet)
	switch {
	case err != nil:
		add("network.subnet", "%q is not a CIDR subnet (e.g. %q)", nw.Subnet, DefaultSubnet)
	case !prefix.Addr().Is4():
		add("network.subnet", "%q: only IPv4 subnets are supported", nw.Subnet)
	case prefix.Bits() > 29:
		add("network.subnet", "%q is too small: want /29 or larger", nw.Subnet)
	case prefix.Masked() != prefix:
		add("network.subnet", "%q has host bits set; did you mean %q?", nw.Subnet, prefix.Masked().String())
	case !prefix.Addr().IsPrivate() || !lastAddr(prefix).IsPrivate():
		// The harness's bridge address and a route to the subnet go on this
		// host: a public range would hijack traffic to real hosts.
		add("network.subnet", "%q is not a private range: want one inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16", nw.Subnet)
	}
	kind := m.validateKinds(add)
	if !slices.Contains([]string{"auto", "netem", "userspace", "agent", "none"}, nw.Linkem) {
		add("network.linkem", "%q: want \"auto\", \"netem\", \"userspace\", \"agent\" or \"none\"", nw.Linkem)
	}
	if _, _, err := ParseJitter(nw.Jitter); err != nil {
		add("network.jitter", "%v", err)
	}
	if _, err := ParseLoss(nw.Loss); err != nil {
		add("network.loss", "%v", err)
	}
	if _, err := ParseBandwidth(nw.Bandwidth); err != nil {
		add("network.bandwidth", "%v", err)
	}
	if nw.TimeScale != 0 && (nw.TimeScale < 1 || nw.TimeScale > 100) {
		add("network.time_scale", "%v: want a factor in [1, 100] (1 = real time) by which every consensus timeout is stretched", nw.TimeScale)
	}
	zonesOK := m.validateZoneSet(add)
	m.validateThresholds(add)
	m.validateInfra(add)

	total, validators, seeds, overLimit := 0, 0, 0, false
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name
		if !groupRE.MatchString(name) {
			add(f, "group name %q must be 1-16 lowercase letters or digits, starting with a letter", name)
		}
		switch {
		case g.Count < 1:
			add(f+".count", "must be at least 1, got %d", g.Count)
		case g.Count > MaxNodes:
			add(f+".count", "%d nodes: a testnet has at most %d (see docs/manifest.md, limits)", g.Count, MaxNodes)
		}
		if !slices.Contains(Roles, g.Role) {
			add(f+".role", "%q: want one of %s", g.Role, strings.Join(Roles, ", "))
		}
		if ref, err := release.Parse(g.Release); err != nil {
			add(f+".release", "%v", err)
		} else if err := ReleaseSupported(ref.Name, ref.Version); ref.Kind == release.Tag && err != nil {
			add(f+".release", "%q: %v", g.Release, err)
		}
		if !slices.Contains([]string{"kvstore", "kvstore-socket", AppAccounts}, g.App) {
			add(f+".app", "%q: want \"kvstore\", \"kvstore-socket\" or \"accounts\"", g.App)
		}
		m.validateGroupZones(f, g, zonesOK, add)
		checkDuration(add, f+".start_delay", g.StartDelay.Duration, MaxStartDelay)
		for key, v := range g.Config {
			if err := checkOverride(key, v); err != nil {
				add(f+".config."+key, "%v", err)
			}
		}
		if g.Count > MaxNodes {
			overLimit = true
		}
		if g.Count > 0 {
			// Clamped: counts past the limit are already reported, and a
			// sum of huge counts must not overflow.
			total += min(g.Count, MaxNodes+1)
			switch g.Role {
			case "validator":
				validators += min(g.Count, MaxNodes+1)
			case "seed":
				seeds += min(g.Count, MaxNodes+1)
			}
		}
	}
	if validators == 0 && !kind.NoChain {
		add("node", "the testnet has 0 validators: add a [node.validator] group with count >= 1")
	}
	if total > MaxNodes && !overLimit {
		add("node", "%d nodes: a testnet has at most %d (see docs/manifest.md, limits)", total, MaxNodes)
	}
	if err == nil && prefix.Addr().Is4() && total > 0 && !overLimit {
		// .0 network, .1 the harness's bridge, last address broadcast.
		if usable := 1<<(32-prefix.Bits()) - 3; total > usable {
			add("network.subnet", "%s holds %d node addresses, the manifest has %d nodes", nw.Subnet, usable, total)
		}
	}
	m.validateTopology(add, total, seeds, !overLimit && total <= MaxNodes)
	if nw.Topology == "seeds" && seeds == 0 {
		add("network.topology", "\"seeds\" needs a group with role = \"seed\"")
	}
	if nw.Topology != "random" && (nw.Peers != 0 || m.pos.has("network.peers")) {
		add("network.peers", "only the \"random\" topology picks peers; remove it or set topology = \"random\"")
	}
	if nw.Topology == "random" {
		others := total - seeds - 1
		switch {
		case seeds > 0:
			add("network.topology", "\"random\" turns PEX off (the graph is the plan's), so seed nodes would serve no one: remove the seed group or use topology = \"seeds\"")
		case others < 1:
			add("network.topology", "\"random\" needs at least 2 nodes")
		case nw.Peers < 0 || nw.Peers > others:
			add("network.peers", "%d: want 1 to %d (the other nodes), or 0 for min(%d, %d)", nw.Peers, others, DefaultPeers, others)
		}
	}
	if !kind.Publishes {
		errs = append(errs, m.validateLoad(validators)...)
		m.validateAccounts(add)  // accounts.go
		m.validateTransport(add) // transport.go
		m.validateMempool(add)   // mempool.go
	}
	errs = append(errs, m.validateGenesis()...)
	errs = append(errs, m.validateVariants(errs)...) // variants.go
	errs = append(errs, m.validateFaults()...)
	return errs
}

// lastAddr is the last address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// validateZoneSet reads [network].zones; ok is false when it is set but
// unusable, so that node zones are not also reported against it.
func (m *Manifest) validateZoneSet(add func(string, string, ...any)) (ok bool) {
	m.zoneNames, m.zonesPath = nil, ""
	spec := m.Network.Zones
	if spec == "" {
		return true
	}
	if names, ok := BuiltinZoneSets[spec]; ok {
		m.zoneNames = names
		return true
	}
	path, t, err := readZoneCSV(m.Dir, spec)
	var ce *CSVError
	switch {
	case errors.As(err, &ce):
		// The CSV's own file:line, behind the manifest's.
		add("network.zones", "%s:%d: %s", path, ce.Line, ce.Msg)
		return false
	case err != nil:
		add("network.zones", "%v", err)
		return false
	}
	m.zoneNames, m.zonesPath = t.Zones, path
	return true
}

func (m *Manifest) validateGroupZones(f string, g *Group, zonesOK bool, add func(string, string, ...any)) {
	if g.Zone != "" && len(g.Zones) > 0 {
		add(f+".zones", "set zone or zones, not both")
		return
	}
	set := m.zoneNames
	check := func(field, z string) {
		switch {
		case z == RandomZone && field == f+".zone":
			if m.Network.Zones == "" {
				add(field, "\"random\" draws from the zone set: set [network] zones = \"aws\" or a CSV")
			}
		case z == RandomZone:
			add(field, "\"random\" is for zone, not zones: zone = \"random\" draws every node's zone from the zone set")
		case z == "" || len(z) > 64 || strings.IndexFunc(z, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0:
			add(field, "%q is not a zone name (1-64 printable characters, no spaces)", z)
		case set != nil && !slices.Contains(set, z):
			hint := ""
			if z == DefaultZone && !m.pos.has(f+".zone") {
				hint = fmt.Sprintf("the default zone %q ", z)
			} else {
				hint = fmt.Sprintf("%q ", z)
			}
			add(field, "%sis not in zone set %s: want one of %s, or zone = \"random\"", hint, m.Network.Zones, strings.Join(set, ", "))
		}
	}
	if !zonesOK {
		set = nil
	}
	if len(g.Zones) > 0 {
		for _, z := range g.Zones {
			check(f+".zones", z)
		}
		return
	}
	check(f+".zone", g.Zone)
}

// checkDuration: 0 <= d <= limit.
func checkDuration(add func(string, string, ...any), field string, d, limit time.Duration) {
	if d < 0 || d > limit {
		add(field, "%s: want 0 to %s", d, limit)
	}
}

func (m *Manifest) validateLoad(validators int) Errors {
	var errs Errors
	add := func(field, format string, args ...any) { errs = append(errs, m.Errorf(field, format, args...)) }
	for _, e := range CheckLoad(m.Load, validators) {
		add(e.Field, "%s", e.Msg)
	}
	return errs
}

// CheckLoad is the [load] table's rules, for validators target nodes (all
// of the manifest's validators). It returns FieldErrors without a file or
// line: Validate locates them; internal/load calls it for a Config built in
// code.
func CheckLoad(l Load, validators int) []*FieldError {
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	// !(x > 0) also catches NaN; TOML and strconv both accept nan and inf.
	rateOK := l.Rate > 0 && l.Rate <= MaxRate
	if !rateOK {
		add("load.rate", "must be positive (tx/s per connection), at most %v, got %v", MaxRate, l.Rate)
	}
	connsOK := l.Connections >= 1 && l.Connections <= MaxConnections
	if !connsOK {
		add("load.connections", "must be 1 to %d (per target), got %d", MaxConnections, l.Connections)
	}
	durOK := l.Duration.Duration >= 0 && l.Duration.Duration <= MaxDuration
	if !durOK {
		add("load.duration", "%s: want 0 to %s", l.Duration.Duration, MaxDuration)
	}
	switch {
	case l.Count < 0 || l.Count > MaxTxs:
		add("load.count", "must be 0 to %d, got %d", MaxTxs, l.Count)
	case l.Duration.Duration <= 0 && l.Count == 0 && durOK && l.Workload != WorkloadAccounts:
		add("load.duration", "set a positive duration or count")
	}
	kvRules := checkAccountsLoad(l, add) // accounts.go
	switch {
	case !kvRules:
	case l.Size < MinTxSize(l.Format):
		add("load.size", "%d bytes is too small for the %q payload: want at least %d", l.Size, l.Format, MinTxSize(l.Format))
	case l.Size > MaxTxSize:
		add("load.size", "%d bytes: at most %d (CometBFT's default mempool.max_tx_bytes)", l.Size, MaxTxSize)
	case l.Format == "loadtime" && l.Size%2 != 0:
		add("load.size", "%d: the \"loadtime\" payload is hex, so its size must be even", l.Size)
	}
	enum := func(field, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			add(field, "%q: want one of %s", v, strings.Join(allowed, ", "))
		}
	}
	enum("load.shape", l.Shape, "constant", "ramp")
	if kvRules {
		enum("load.target", l.Target, "round-robin", "all", "single")
	}
	enum("load.transport", l.Transport, "websocket", "http")
	enum("load.method", l.Method, "async", "sync")
	enum("load.format", l.Format, "kv", "loadtime")
	enum("load.keys", l.Keys, "unique", "fixed")
	enum("load.latency_block", l.LatencyBlock, "H", "H+1")
	if l.Shape == "ramp" {
		if rateOK && !(l.RampFrom >= 0 && l.RampFrom < l.Rate) {
			add("load.ramp_from", "a ramp starts below rate: want 0 <= ramp_from < %v, got %v", l.Rate, l.RampFrom)
		}
		if l.Duration.Duration <= 0 && durOK {
			add("load.duration", "a ramp runs over a duration: set duration (count alone does not define one)")
		}
	} else if math.IsNaN(l.RampFrom) || math.IsInf(l.RampFrom, 0) || l.RampFrom < 0 {
		add("load.ramp_from", "must be a number >= 0, got %v", l.RampFrom)
	}
	checkWait := func(field string, d time.Duration) {
		if d < 0 || d > MaxWait {
			add(field, "%s: want 0 to %s", d, MaxWait)
		}
	}
	checkWait("load.warmup", l.Warmup.Duration)
	checkWait("load.grace", l.Grace.Duration)

	// The whole run's count, so that rate × connections × duration cannot
	// ask for billions of txs one field at a time.
	if kvRules && rateOK && connsOK && durOK && l.Count == 0 && l.Duration.Duration > 0 {
		conns := float64(l.Connections)
		if l.Target == "all" {
			conns *= float64(max(validators, 1))
		}
		perConn := l.Rate
		if l.Shape == "ramp" && l.RampFrom >= 0 && l.RampFrom < l.Rate {
			perConn = (l.RampFrom + l.Rate) / 2
		}
		if n := math.Ceil(perConn*l.Duration.Seconds()) * conns; n > MaxTxs {
			add("load.duration", "the load would send %.0f txs (rate × connections × duration%s), more than the %d one run may send",
				n, map[bool]string{true: " × validators", false: ""}[l.Target == "all"], MaxTxs)
		}
	}
	return errs
}

// MinTxSize is the smallest tx the payload format can encode: its header
// (run id, sequence, send time) must fit. The load package enforces the same
// numbers when it builds txs.
func MinTxSize(format string) int {
	if format == "loadtime" {
		// "a=" + hex of the protobuf payload: 88 covers every connection
		// count and rate (their varints grow); internal/load computes the
		// exact minimum for a given load.
		return 88
	}
	return 48
}

// harnessKeys are the config.toml settings benchnet derives from the plan:
// the addresses the harness reaches a node at, its peers and its app. An
// override would cut the harness off (or the node off its peers) and fail
// the run long after it started.
var harnessKeys = map[string]string{
	"proxy_app":                              "the app comes from the group's app",
	"p2p.laddr":                              "addresses come from the plan",
	"p2p.external_address":                   "addresses come from the plan",
	"p2p.persistent_peers":                   "peers come from [network].topology",
	"p2p.seeds":                              "peers come from [network].topology",
	"rpc.laddr":                              "the harness sends load and reads blocks there",
	"instrumentation.prometheus":             "the harness scrapes every node",
	"instrumentation.prometheus_listen_addr": "the harness scrapes every node",
}

// NamespaceKey is the config.toml key that renames a node's metrics
// (NAMESPACE_consensus_height, ...); the plan records its value per node.
const NamespaceKey = "instrumentation.namespace"

var metricNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// checkOverride rejects values that cannot be written into config.toml.
func checkOverride(key string, v any) error {
	if key == "" || strings.ContainsAny(key, " \t\"'[]") {
		return fmt.Errorf("%q is not a config key (want e.g. \"mempool.size\")", key)
	}
	if why, ok := harnessKeys[key]; ok {
		return fmt.Errorf("benchnet sets %s itself: %s", key, why)
	}
	if key == NamespaceKey {
		// Every reader of the node's metrics prefixes its series with it.
		if s, ok := v.(string); !ok || !metricNameRE.MatchString(s) {
			return fmt.Errorf("%v: want a Prometheus metric name prefix (letters, digits, '_'), e.g. \"cometbft\"", v)
		}
	}
	switch v := v.(type) {
	case string, bool, int64:
		return nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v is not a value a config can hold", v)
		}
		return nil
	case []any:
		for _, e := range v {
			switch e.(type) {
			case string, bool, int64, float64:
			default:
				return fmt.Errorf("an array of %T cannot be a config override (want strings or numbers)", e)
			}
		}
		return nil
	default:
		return fmt.Errorf("value of type %T cannot be a config override", v)
	}
}
