package manifest

// The p2p stacks a CometBFT node can run (Group.Transport).
const (
	// TransportComet is CometBFT's own p2p (MConnection over TCP): the
	// default, written "" or "comet".
	TransportComet = "comet"
	// TransportLibp2p is go-libp2p over QUIC (UDP on the p2p port), set
	// in config.toml as [p2p.libp2p] enabled with bootstrap_peers; from
	// cometbft v0.40.0 on.
	TransportLibp2p = "libp2p"
)

// TransportOf is a group's transport with the default filled in.
func TransportOf(g *Group) string {
	if g.Transport == "" {
		return TransportComet
	}
	return g.Transport
}

// validateTransport checks every group's transport: a known one, on a
// release that has it, one for the whole testnet (a go-libp2p node and a
// CometBFT-p2p node speak different protocols and never connect), and
// without PEX, which go-libp2p nodes run without (v0.40.0 node.go turns
// it off), so no seeds.
func (m *Manifest) validateTransport(add func(field, format string, args ...any)) {
	first, firstGroup := "", ""
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name + ".transport"
		t := TransportOf(g)
		if t != TransportComet && t != TransportLibp2p {
			add(f, "%q: want %q (the default) or %q", g.Transport, TransportComet, TransportLibp2p)
			continue
		}
		if first == "" {
			first, firstGroup = t, name
		} else if t != first {
			add(f, "%q, where node.%s runs %q: a go-libp2p node and a CometBFT-p2p node never connect, so every node of a testnet runs one transport (compare them as two variants)", t, firstGroup, first)
		}
		if t != TransportLibp2p {
			continue
		}
		if flavour, v, ok := ParseRelease(g.Release); ok && !inV040Line(flavour, v) {
			add(f, "%s has no go-libp2p transport: it came with cometbft v0.40.0 ([p2p.libp2p]); use release = \"cometbft@v0.40.0\" or later in the v0.40 line", g.Release)
		}
		if g.Role == "seed" {
			add(f, "a seed node crawls the network with PEX, which a go-libp2p node runs without: remove the seed group (peers come from bootstrap_peers)")
		}
		if m.Network.Topology == "seeds" {
			add(f, "topology = \"seeds\" finds peers through PEX, which a go-libp2p node runs without: use topology = \"full\" or \"random\" (their peers become bootstrap_peers)")
		}
	}
}

// inV040Line: the release tag is of cometbft's v0.40 line (or a later
// v0.x), the one with [p2p.libp2p] and the app-side mempool; the v1.0
// line (v1.0.1) and Tendermint Core have neither. A tree or a binary is
// checked when its config.toml is patched (the key is there or not).
func inV040Line(flavour, version string) bool {
	minor, ok := v0Minor(version)
	return flavour == "cometbft" && ok && minor >= 40
}
