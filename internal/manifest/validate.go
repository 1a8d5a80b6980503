package manifest

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// releaseRE is NAME@vMAJOR.MINOR.PATCH with an optional pre-release suffix:
// releases are always pinned (the module proxy refuses @latest for some).
var releaseRE = regexp.MustCompile(`^(cometbft)@v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// ParseRelease splits "cometbft@v1.0.1" into its name and version.
func ParseRelease(s string) (name, version string, ok bool) {
	if !releaseRE.MatchString(s) {
		return "", "", false
	}
	name, version, _ = strings.Cut(s, "@")
	return name, version, true
}

// Validate checks the defaulted manifest and returns every problem found.
func (m *Manifest) Validate() Errors {
	var errs Errors
	add := func(field, format string, args ...any) { errs = append(errs, m.Errorf(field, format, args...)) }

	if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`).MatchString(m.Name) {
		add("name", "%q must be 1-32 lowercase letters, digits or '-'", m.Name)
	}

	prefix, err := netip.ParsePrefix(m.Network.Subnet)
	switch {
	case err != nil:
		add("network.subnet", "%q is not a CIDR subnet (e.g. %q)", m.Network.Subnet, DefaultSubnet)
	case !prefix.Addr().Is4():
		add("network.subnet", "%q: only IPv4 subnets are supported", m.Network.Subnet)
	case prefix.Bits() > 29:
		add("network.subnet", "%q is too small: want /29 or larger", m.Network.Subnet)
	case prefix.Masked() != prefix:
		add("network.subnet", "%q has host bits set; did you mean %q?", m.Network.Subnet, prefix.Masked().String())
	}
	if !slices.Contains([]string{"full", "seeds"}, m.Network.Topology) {
		add("network.topology", "%q: want \"full\" or \"seeds\"", m.Network.Topology)
	}
	if !slices.Contains([]string{"auto", "netem", "userspace", "none"}, m.Network.Linkem) {
		add("network.linkem", "%q: want \"auto\", \"netem\", \"userspace\" or \"none\"", m.Network.Linkem)
	}

	total, validators, seeds := 0, 0, 0
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name
		if !regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`).MatchString(name) {
			add(f, "group name %q must be 1-16 lowercase letters or digits, starting with a letter", name)
		}
		if g.Count < 1 {
			add(f+".count", "must be at least 1, got %d", g.Count)
		}
		if !slices.Contains(Roles, g.Role) {
			add(f+".role", "%q: want one of %s", g.Role, strings.Join(Roles, ", "))
		}
		if _, _, ok := ParseRelease(g.Release); !ok {
			add(f+".release", "%q: want cometbft@vMAJOR.MINOR.PATCH, e.g. %q", g.Release, DefaultRelease)
		}
		if !slices.Contains([]string{"kvstore", "kvstore-socket"}, g.App) {
			add(f+".app", "%q: want \"kvstore\" or \"kvstore-socket\"", g.App)
		}
		if g.Zone != "" && len(g.Zones) > 0 {
			add(f+".zones", "set zone or zones, not both")
		}
		if g.StartDelay.Duration < 0 {
			add(f+".start_delay", "must not be negative")
		}
		for key, v := range g.Config {
			if err := checkOverride(key, v); err != nil {
				add(f+".config."+key, "%v", err)
			}
		}
		if g.Count > 0 {
			total += g.Count
			switch g.Role {
			case "validator":
				validators += g.Count
			case "seed":
				seeds += g.Count
			}
		}
	}
	if validators == 0 {
		add("node", "the testnet has 0 validators: add a [node.validator] group with count >= 1")
	}
	if err == nil && prefix.Addr().Is4() && total > 0 {
		// .0 network, .1 the harness's bridge, last address broadcast.
		if usable := 1<<(32-prefix.Bits()) - 3; total > usable {
			add("network.subnet", "%s holds %d node addresses, the manifest has %d nodes", m.Network.Subnet, usable, total)
		}
	}
	if m.Network.Topology == "seeds" && seeds == 0 {
		add("network.topology", "\"seeds\" needs a group with role = \"seed\"")
	}
	errs = append(errs, m.validateLoad()...)
	return errs
}

func (m *Manifest) validateLoad() Errors {
	var errs Errors
	add := func(field, format string, args ...any) { errs = append(errs, m.Errorf(field, format, args...)) }
	l := m.Load
	if l.Rate <= 0 {
		add("load.rate", "must be positive (tx/s per connection), got %v", l.Rate)
	}
	if l.Connections < 1 {
		add("load.connections", "must be at least 1, got %d", l.Connections)
	}
	if l.Duration.Duration <= 0 && l.Count <= 0 {
		add("load.duration", "set a positive duration or count")
	}
	if l.Count < 0 {
		add("load.count", "must not be negative")
	}
	if l.Size < MinTxSize(l.Format) {
		add("load.size", "%d bytes is too small for the %q payload: want at least %d", l.Size, l.Format, MinTxSize(l.Format))
	} else if l.Format == "loadtime" && l.Size%2 != 0 {
		add("load.size", "%d: the \"loadtime\" payload is hex, so its size must be even", l.Size)
	}
	enum := func(field, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			add(field, "%q: want one of %s", v, strings.Join(allowed, ", "))
		}
	}
	enum("load.shape", l.Shape, "constant", "ramp")
	enum("load.target", l.Target, "round-robin", "all", "single")
	enum("load.transport", l.Transport, "websocket", "http")
	enum("load.method", l.Method, "async", "sync")
	enum("load.format", l.Format, "kv", "loadtime")
	enum("load.keys", l.Keys, "unique", "fixed")
	enum("load.latency_block", l.LatencyBlock, "H", "H+1")
	if l.Shape == "ramp" && (l.RampFrom < 0 || l.RampFrom >= l.Rate) {
		add("load.ramp_from", "a ramp starts below rate: want 0 <= ramp_from < %v, got %v", l.Rate, l.RampFrom)
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

// checkOverride rejects values that cannot be written into config.toml.
func checkOverride(key string, v any) error {
	if key == "" || strings.ContainsAny(key, " \t\"'[]") {
		return fmt.Errorf("%q is not a config key (want e.g. \"mempool.size\")", key)
	}
	switch v.(type) {
	case string, bool, int64, float64:
		return nil
	case []any:
		return nil
	default:
		return fmt.Errorf("value of type %T cannot be a config override", v)
	}
}
