package cometbft

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

func TestArgv(t *testing.T) {
	if got, want := NodeArgv("/b/cometbft", "/h/validator0"), []string{"/b/cometbft", "start", "--home", "/h/validator0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NodeArgv = %q, want %q", got, want)
	}
	got := AppArgv("/b/abci-cli", "/h/validator0")
	want := []string{"/b/abci-cli", "kvstore", "--address", "tcp://127.0.0.1:26658", "--persist", "/h/validator0/data/app"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AppArgv = %q, want %q", got, want)
	}
}

func TestNodeID(t *testing.T) {
	tests := []struct {
		name, key, want, wantErr string
	}{
		// Key and ID from `cometbft init` + `cometbft show-node-id` (v1.0.1).
		{name: "ed25519",
			key:  `{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"V9P1Fv/mXEdQQ4UMXpVfctUTse1l5aEVT+vS3RTWX3BJnuBzlCGB0DOd2VwWw8CPEjmYE4P0XFxJhmVTIbI6Hw=="}}`,
			want: "02cffb01d32f5eaf58c77dd3a6b660ea8137d147"},
		{name: "secp256k1", key: `{"priv_key":{"type":"tendermint/PrivKeySecp256k1","value":"AAAA"}}`, wantErr: "want an ed25519 key"},
		{name: "short", key: `{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"AAAA"}}`, wantErr: "not a 64-byte"},
		{name: "not json", key: `{`, wantErr: "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, "config"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "config", "node_key.json"), []byte(tt.key), 0o600); err != nil {
				t.Fatal(err)
			}
			id, err := NodeID(home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id != tt.want {
				t.Errorf("NodeID = %s, want %s", id, tt.want)
			}
		})
	}
}

// cachedBinary returns the cached cometbft binary of version or skips.
func cachedBinary(t *testing.T, version string) (release.Release, string) {
	t.Helper()
	rel := relOf(version)
	return rel, testrel.NeedTool(t, rel, "cometbft")
}

type genesis struct {
	ChainID    string `json:"chain_id"`
	Validators []struct {
		PubKey struct{ Value string } `json:"pub_key"`
	} `json:"validators"`
}

// checkHomes checks what every testnet needs from GenerateHomes, with the
// real binaries: one home per node, one shared genesis holding exactly the
// validators' keys, configs with the release's own format and the right
// peers, addresses and metrics.
func checkHomes(t *testing.T, p *plan.Testnet, bins map[release.Release]string, homes string) {
	t.Helper()
	entries, err := os.ReadDir(homes)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	for _, n := range p.Nodes {
		want = append(want, n.Name)
	}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("homes dir holds %v, want exactly %v", got, want)
	}

	ids := map[string]string{}
	for _, n := range p.Nodes {
		home := filepath.Join(homes, n.Name)
		id, err := NodeID(home)
		if err != nil {
			t.Fatal(err)
		}
		// Our ID computation agrees with the release's own.
		out, err := exec.Command(bins[n.Release], "show-node-id", "--home", home).Output()
		if err != nil {
			t.Fatalf("%s show-node-id: %v", n.Name, err)
		}
		if s := strings.TrimSpace(string(out)); s != id {
			t.Errorf("%s: NodeID = %s, cometbft show-node-id = %s", n.Name, id, s)
		}
		ids[n.Name] = id
	}

	first, err := os.ReadFile(filepath.Join(homes, p.Nodes[0].Name, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g genesis
	if err := json.Unmarshal(first, &g); err != nil {
		t.Fatal(err)
	}
	vals := p.Validators()
	if len(g.Validators) != len(vals) {
		t.Errorf("genesis has %d validators, want %d", len(g.Validators), len(vals))
	}
	inGenesis := map[string]bool{}
	for _, v := range g.Validators {
		inGenesis[v.PubKey.Value] = true
	}
	for _, n := range p.Nodes {
		home := filepath.Join(homes, n.Name)
		gen, err := os.ReadFile(filepath.Join(home, "config", "genesis.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gen, first) {
			t.Errorf("%s: genesis.json differs from %s's", n.Name, p.Nodes[0].Name)
		}
		pvData, err := os.ReadFile(filepath.Join(home, "config", "priv_validator_key.json"))
		if err != nil {
			t.Fatal(err)
		}
		var pv struct {
			PubKey struct{ Value string } `json:"pub_key"`
		}
		if err := json.Unmarshal(pvData, &pv); err != nil {
			t.Fatal(err)
		}
		if isVal := n.Role == "validator"; inGenesis[pv.PubKey.Value] != isVal {
			t.Errorf("%s (role %s): its validator key in genesis = %v", n.Name, n.Role, !isVal)
		}
		cfg, err := os.ReadFile(filepath.Join(home, "config", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		// The config is the one the node's own release writes (Tendermint
		// Core's has no version line, but its own [fastsync] section).
		v := `version = "` + strings.TrimPrefix(n.Release.Version, "v") + `"`
		if n.Release.Name == "tendermint" {
			v = "[fastsync]"
		}
		if !bytes.Contains(cfg, []byte("\n"+v+"\n")) {
			t.Errorf("%s: config.toml lacks %s", n.Name, v)
		}
		checkConfig(t, cfg, p, n, ids)
	}
}

func TestGenerateHomes(t *testing.T) {
	for _, version := range []string{"v1.0.1", "v0.38.17", "tendermint@v0.34.22"} {
		for _, example := range []string{"quickstart", "seeds"} {
			t.Run(version+"/"+example, func(t *testing.T) {
				rel, bin := cachedBinary(t, version)
				p := loadPlan(t, example, version)
				bins := map[release.Release]string{rel: bin}
				homes := filepath.Join(t.TempDir(), "homes")
				if err := GenerateHomes(context.Background(), p, bins, homes); err != nil {
					t.Fatal(err)
				}
				checkHomes(t, p, bins, homes)
				// A second run refuses to overwrite the homes.
				if err := GenerateHomes(context.Background(), p, bins, homes); err == nil || !strings.Contains(err.Error(), "already exists") {
					t.Errorf("second GenerateHomes: err = %v, want already exists", err)
				}
			})
		}
	}
}

// TestGenerateHomesMixedReleases runs two validators of each release: the
// genesis comes from the first validator's release, each config.toml from
// the node's own.
func TestGenerateHomesMixedReleases(t *testing.T) {
	r1, b1 := cachedBinary(t, "v1.0.1")
	r2, b2 := cachedBinary(t, "v0.38.17")
	p := loadPlan(t, "quickstart", "v1.0.1")
	p.Nodes[2].Release, p.Nodes[3].Release = r2, r2
	bins := map[release.Release]string{r1: b1, r2: b2}
	homes := filepath.Join(t.TempDir(), "homes")
	if err := GenerateHomes(context.Background(), p, bins, homes); err != nil {
		t.Fatal(err)
	}
	checkHomes(t, p, bins, homes)
}

func TestGenerateHomesErrors(t *testing.T) {
	rel, bin := cachedBinary(t, "v0.38.17")
	tests := []struct {
		name    string
		edit    func(p *plan.Testnet)
		bins    map[release.Release]string
		wantErr string
	}{
		{name: "override of a key the release lacks",
			edit: func(p *plan.Testnet) {
				p.Nodes[0].Config = map[string]any{"consensus.next_block_delay": "500ms"}
			},
			wantErr: `node validator0 (cometbft@v0.38.17): config key "consensus.next_block_delay" is not in this release's config.toml`},
		{name: "v1-only key on v0.38",
			edit:    func(p *plan.Testnet) { p.Nodes[1].Config = map[string]any{"grpc.laddr": "tcp://0.0.0.0:26670"} },
			wantErr: `node validator1 (cometbft@v0.38.17): config key "grpc.laddr" is not in this release's config.toml: the [grpc] section exists from v1.0 on`},
		{name: "no binary",
			bins:    map[release.Release]string{},
			wantErr: "node validator0: no binary for cometbft@v0.38.17"},
		{name: "no validator",
			edit: func(p *plan.Testnet) {
				for _, n := range p.Nodes {
					n.Role = "full"
				}
			},
			wantErr: "no validator"},
		{name: "unknown app",
			edit:    func(p *plan.Testnet) { p.Nodes[3].App = "gaia" },
			wantErr: `node validator3 (cometbft@v0.38.17): app "gaia"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := loadPlan(t, "quickstart", "v0.38.17")
			if tt.edit != nil {
				tt.edit(p)
			}
			bins := tt.bins
			if bins == nil {
				bins = map[release.Release]string{rel: bin}
			}
			err := GenerateHomes(context.Background(), p, bins, filepath.Join(t.TempDir(), "homes"))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
