package manifest

import "testing"

func TestGossipManifestErrors(t *testing.T) {
	const g = "[node.gossip]\ncount = 4\nkind = \"gossipsub\"\n"
	cases := []errCase{
		{"unknown kind", "[node.validator]\ncount = 1\nkind = \"libp2p\"\n",
			[]string{"bad.toml:3: node.validator.kind: \"libp2p\": want one of cometbft, gossipsub"}},
		{"mixed kinds", "[node.validator]\ncount = 1\n" + g,
			[]string{"bad.toml:5: node.gossip.kind: \"gossipsub\", but another group is \"cometbft\""}},
		{"release on gossipsub", g + "release = \"cometbft@v1.0.1\"\n",
			[]string{"bad.toml:4: node.gossip.release: does not apply to kind = \"gossipsub\""}},
		{"config on gossipsub", g + "[node.gossip.config]\nlog_level = \"info\"\n",
			[]string{"bad.toml:4: node.gossip.config: does not apply"}},
		{"load on gossipsub", g + "[load]\nrate = 10\n",
			[]string{"bad.toml:4: load: [load] is the CometBFT tx load"}},
		{"publish on cometbft", "[node.validator]\ncount = 1\n[publish]\nrate = 10\n",
			[]string{"bad.toml:3: publish: [publish] applies to kind = \"gossipsub\" groups only"}},
		{"gossipsub table on cometbft", "[node.validator]\ncount = 1\n[gossipsub]\nd = 8\n",
			[]string{"bad.toml:3: gossipsub: [gossipsub] applies"}},
		{"bad publish", g + "[publish]\nrate = -1\nsize = 8\nsource = \"gossip9\"\nwarmup = \"-1s\"\n",
			[]string{"bad.toml:5: publish.rate: must be positive", "bad.toml:6: publish.size: 8 bytes",
				"bad.toml:7: publish.source: \"gossip9\": want \"random\" or a node", "bad.toml:8: publish.warmup"}},
		{"no duration or count", g + "[publish]\nduration = \"0s\"\n",
			[]string{"bad.toml:5: publish.duration: set a positive duration or count"}},
		{"bad degrees", g + "[gossipsub]\nd = 4\ndlo = 5\ndhi = 3\nheartbeat = \"1ms\"\noutbound_queue = 0\n",
			[]string{"bad.toml:6: gossipsub.dlo: 5: want 1 to d (4)", "bad.toml:7: gossipsub.dhi: 3", "bad.toml:8: gossipsub.heartbeat", "bad.toml:9: gossipsub.outbound_queue"}},
		{"seeds topology", "[network]\ntopology = \"seeds\"\n" + g,
			[]string{"bad.toml:2: network.topology: \"seeds\" needs PEX"}},
	}
	checkErrors(t, cases)
}
