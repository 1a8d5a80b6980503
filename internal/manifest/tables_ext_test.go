package manifest_test

import (
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestGossipManifestDefaults: the generic [publish] workload and the
// kind's own [gossipsub] table (decoded by its schema, linked through
// kindtest) get their defaults; a CometBFT manifest keeps both empty.
func TestGossipManifestDefaults(t *testing.T) {
	m, err := manifest.Parse("g.toml", []byte("seed = 42\n[node.gossip]\ncount = 5\nkind = \"gossipsub\"\n[publish]\nrate = 50\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != spec.Name || !m.Publishes() {
		t.Fatalf("kind %q, publishes %v", m.Kind(), m.Publishes())
	}
	want := manifest.Publish{Rate: 50, Size: 1000, Duration: rundir.Duration{Duration: manifest.DefaultPublishDuration}, Source: "random",
		Warmup: rundir.Duration{Duration: manifest.DefaultPublishWarmup}, Cooldown: rundir.Duration{Duration: manifest.DefaultPublishCooldown}}
	if m.Publish != want {
		t.Errorf("publish %+v\n want %+v", m.Publish, want)
	}
	tables, ok := m.KindTables().(*spec.Tables)
	if !ok {
		t.Fatalf("kind tables %T, want *spec.Tables", m.KindTables())
	}
	wantG := spec.Gossipsub{D: 6, Dlo: 5, Dhi: 12, Dlazy: 6, Heartbeat: rundir.Duration{Duration: time.Second}, OutboundQueue: 32, ValidateQueue: 32}
	if tables.Gossipsub != wantG {
		t.Errorf("gossipsub %+v\n want %+v", tables.Gossipsub, wantG)
	}
	// A CometBFT manifest keeps the tables empty (its plan does not change).
	c, err := manifest.Parse("c.toml", []byte("[node.validator]\ncount = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind() != manifest.KindCometBFT || c.Publishes() || c.Publish != (manifest.Publish{}) || c.KindTables() != nil {
		t.Errorf("cometbft manifest: kind %q publish %+v tables %+v", c.Kind(), c.Publish, c.KindTables())
	}
}

// TestKindTableDecodedStrictly: the kind's decoder refuses an unknown key
// and a wrong type in its own table at the key's line, beside the
// manifest's own unknown keys.
func TestKindTableDecodedStrictly(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown key", "[node.g]\nkind = \"gossipsub\"\ncount = 2\n[gossipsub]\nd = 6\nfanout = 3\n",
			"invalid manifest: m.toml:6: gossipsub.fanout: unknown key"},
		{"unknown keys, both decoders", "bogus = 1\n[node.g]\nkind = \"gossipsub\"\ncount = 2\n[gossipsub]\nfanout = 3\n",
			"invalid manifest (2 problems):\n  m.toml:1: bogus: unknown key\n  m.toml:6: gossipsub.fanout: unknown key"},
		{"wrong type", "[node.g]\nkind = \"gossipsub\"\ncount = 2\n[gossipsub]\nd = \"six\"\n",
			"invalid manifest: m.toml:5: gossipsub.d: "},
		{"another kind's table", "[node.validator]\ncount = 1\n[gossipsub]\nfanout = 3\n",
			"invalid manifest: m.toml:3: gossipsub: [gossipsub] applies to kind = \"gossipsub\" groups only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse("m.toml", []byte(tc.src))
			if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Errorf("error %v\n want it to start %q", err, tc.want)
			}
		})
	}
}
