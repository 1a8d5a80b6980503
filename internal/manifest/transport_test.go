package manifest

import "testing"

const libp2pBase = "[node.validator]\ncount = 2\nrelease = \"cometbft@v0.40.0\"\ntransport = \"libp2p\"\n"

func TestTransportErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{"unknown", "[node.validator]\ncount = 1\ntransport = \"tcp\"\n",
			[]string{"bad.toml:3: node.validator.transport: \"tcp\": want \"comet\" (the default) or \"libp2p\""}},
		{"v1.0.1 has none", "[node.validator]\ncount = 1\nrelease = \"cometbft@v1.0.1\"\ntransport = \"libp2p\"\n",
			[]string{"bad.toml:4: node.validator.transport: cometbft@v1.0.1 has no go-libp2p transport: it came with cometbft v0.40.0"}},
		{"the default release has none", "[node.validator]\ncount = 1\ntransport = \"libp2p\"\n",
			[]string{"bad.toml:3: node.validator.transport: cometbft@v1.0.1 has no go-libp2p transport"}},
		{"v0.39 has none", "[node.validator]\ncount = 1\nrelease = \"cometbft@v0.39.4\"\ntransport = \"libp2p\"\n",
			[]string{"bad.toml:4: node.validator.transport: cometbft@v0.39.4 has no go-libp2p"}},
		{"tendermint", "[node.validator]\ncount = 1\nrelease = \"tendermint@v0.34.22\"\ntransport = \"libp2p\"\n",
			[]string{"bad.toml:4: node.validator.transport: tendermint@v0.34.22 has no go-libp2p"}},
		{"mixed", libp2pBase + "[node.full]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\n",
			[]string{"node.full.transport: \"comet\", where node.validator runs \"libp2p\": a go-libp2p node and a CometBFT-p2p node never connect"}},
		{"mixed, written", libp2pBase + "[node.full]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\ntransport = \"comet\"\n",
			[]string{"bad.toml:8: node.full.transport: \"comet\", where node.validator runs \"libp2p\""}},
		{"seed", libp2pBase + "[node.seed]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\ntransport = \"libp2p\"\n[network]\ntopology = \"seeds\"\n",
			[]string{"bad.toml:8: node.seed.transport: a seed node crawls the network with PEX", "bad.toml:4: node.validator.transport: topology = \"seeds\" finds peers through PEX"}},
		{"gossipsub", "[node.peer]\nkind = \"gossipsub\"\ncount = 3\ntransport = \"libp2p\"\n[publish]\nrate = 1\n",
			[]string{"node.peer.transport: does not apply to kind = \"gossipsub\"", "it always runs go-libp2p"}},
	})
	for _, ok := range []string{
		libp2pBase,
		libp2pBase + "[node.full]\ncount = 1\nrelease = \"cometbft@v0.40.0\"\ntransport = \"libp2p\"\n",
		libp2pBase + "[network]\ntopology = \"random\"\npeers = 1\n",
		"[node.validator]\ncount = 1\ntransport = \"comet\"\n",
		"[node.validator]\ncount = 1\nrelease = \"cometbft@v0.41.2\"\ntransport = \"libp2p\"\n",
	} {
		if _, err := Parse("ok.toml", []byte(ok)); err != nil {
			t.Errorf("refused:\n%s\n%v", ok, err)
		}
	}
}
