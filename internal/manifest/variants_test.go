package manifest

import (
	"errors"
	"strings"
	"testing"
)

const variantsManifest = `name = "cmp"
[node.validator]
count = 2
release = "cometbft@v0.38.17"
[node.validator.config]
"log_level" = "info"
[node.full]
count = 1
[load]
rate = 50
duration = "5s"
[genesis]
"consensus_params.block.max_bytes" = 4194304

[variants.old]

[variants.new]
node.validator.release = "cometbft@v1.0.1"
load.rate = 80
load.warmup = "0s"
[variants.new.node.validator.config]
"consensus.timeout_commit" = "3s"
[variants.new.genesis]
"consensus_params.feature.pbts_enable_height" = 1
`

func TestVariants(t *testing.T) {
	m, err := Parse("cmp.toml", []byte(variantsManifest))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.VariantNames(), ","); got != "old,new" {
		t.Fatalf("variants %q, want old,new (file order)", got)
	}
	old, err := m.Variant("old")
	if err != nil {
		t.Fatal(err)
	}
	nw, err := m.Variant("new")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"base release kept", old.Node["validator"].Release, "cometbft@v0.38.17"},
		{"variant release", nw.Node["validator"].Release, "cometbft@v1.0.1"},
		{"variant config merged key by key", nw.Node["validator"].Config["log_level"], "info"},
		{"variant config key", nw.Node["validator"].Config["consensus.timeout_commit"], "3s"},
		{"base has no variant key", old.Node["validator"].Config["consensus.timeout_commit"], nil},
		{"variant load", nw.Load.Rate, 80.0},
		{"load rest kept", nw.Load.Duration.Duration.String(), "5s"},
		{"base load", old.Load.Rate, 50.0},
		{"genesis kept", nw.Genesis["consensus_params.block.max_bytes"], int64(4194304)},
		{"genesis variant", nw.Genesis["consensus_params.feature.pbts_enable_height"], int64(1)},
		{"full group untouched", nw.Node["full"].Count, 1},
		{"group order", strings.Join(nw.GroupNames(), ","), "validator,full"},
		{"no nested variants", nw.HasVariants(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v (%T), want %v (%T)", c.name, c.got, c.got, c.want, c.want)
		}
	}
	// The rendered variant parses back to the same manifest, groups in order.
	back, err := Parse("back.toml", nw.Raw)
	if err != nil {
		t.Fatalf("variant's Raw does not parse: %v\n%s", err, nw.Raw)
	}
	if strings.Join(back.GroupNames(), ",") != "validator,full" || back.Node["validator"].Release != "cometbft@v1.0.1" ||
		back.Genesis["consensus_params.feature.pbts_enable_height"] != int64(1) || back.Load.Rate != 80 || back.Load.Warmup.Duration != 0 {
		t.Errorf("round trip lost something:\n%s", nw.Raw)
	}
	if _, err := m.Variant("nope"); err == nil {
		t.Error("unknown variant accepted")
	}
}

func TestVariantsBase(t *testing.T) {
	m, err := Parse("cmp.toml", []byte(strings.Replace(variantsManifest, "[variants.old]", "[variants]\nbase = \"new\"\n[variants.old]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.VariantNames(), ","); got != "new,old" {
		t.Fatalf("variants %q, want the base first", got)
	}
}

// Every variant is validated with the manifest; each problem names the
// variant's key and its line.
func TestVariantsInvalid(t *testing.T) {
	cases := []struct {
		name, extra string
		want        []string
	}{
		{"bad release", "[variants.a]\n[variants.b]\nnode.validator.release = \"cometbft@1.0\"\n",
			[]string{"bad.toml:7: variants.b.node.validator.release: \"cometbft@1.0\""}},
		{"unknown key", "[variants.a]\n[variants.b]\nnode.validator.colour = 1\n",
			[]string{"bad.toml:7: variants.b.node.validator.colour: unknown key"}},
		{"bad load", "[variants.a]\n[variants.b]\nload.rate = -1\n",
			[]string{"bad.toml:7: variants.b.load.rate:"}},
		{"bad config value", "[variants.a]\n[variants.b.node.validator.config]\n\"p2p.laddr\" = \"x\"\n",
			[]string{"bad.toml:7: variants.b.node.validator.config.p2p.laddr: benchnet sets"}},
		{"one variant", "[variants.a]\nload.rate = 3\n",
			[]string{"bad.toml:5: variants: one variant (a)"}},
		{"bad base", "[variants]\nbase = \"c\"\n[variants.a]\n[variants.b]\n",
			[]string{"bad.toml:6: variants.base: \"c\" is not a variant"}},
		{"name fixed", "[variants.a]\n[variants.b]\nname = \"x\"\n",
			[]string{"bad.toml:7: variants.b.name: a variant cannot set name"}},
		{"bad variant name", "[variants.a]\n[variants.B_1]\n",
			[]string{"bad.toml:6: variants.B_1: variant name"}},
		{"bad genesis", "[genesis]\n\"chain_id\" = \"x\"\n[variants.a]\n[variants.b]\n",
			[]string{"bad.toml:6: genesis.chain_id: benchnet sets"}},
		{"count in variant breaks validators", "[variants.a]\n[variants.b]\nnode.validator.count = 0\n",
			[]string{"bad.toml:7: variants.b.node.validator.count"}},
	}
	base := "[node.validator]\ncount = 2\n[load]\nrate = 5\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.toml", []byte(base+tc.extra))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want manifest errors, got %v", err)
			}
			for _, w := range tc.want {
				found := false
				for _, e := range errs {
					if strings.HasPrefix(e.Error(), w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no error starting %q in:\n%v", w, err)
				}
			}
		})
	}
}

// A gossipsub variant's rendered manifest (its run directory's
// manifest.toml) parses back: no CometBFT defaults the kind refuses.
func TestGossipVariantRawParses(t *testing.T) {
	m, err := Parse("g.toml", []byte(`name = "g"
[network]
topology = "barabasi-albert"
m = 2
[node.gossip]
kind = "gossipsub"
count = 8
[publish]
rate = 5
[variants.m2]
[variants.m6]
network.m = 6
`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Variant("m6")
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("back.toml", v.Raw)
	if err != nil {
		t.Fatalf("variant's Raw does not parse: %v\n%s", err, v.Raw)
	}
	if back.Network.M != 6 || back.Kind() != "gossipsub" || back.Publish.Rate != 5 {
		t.Errorf("round trip lost something:\n%s", v.Raw)
	}
}
