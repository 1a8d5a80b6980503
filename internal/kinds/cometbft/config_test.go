package cometbft

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
)

const small = `# top comment
version = "1.0.1"
moniker = "vm"

#######
[p2p]
# Address to listen for incoming connections
laddr = "tcp://0.0.0.0:26656"
seeds = ""
pex = true

[mempool]
size = 5000

[grpc.privileged]
laddr = ""
`

func TestPatchConfig(t *testing.T) {
	tests := []struct {
		name    string
		set     []Setting
		want    []string // lines that must be in the output
		wantErr string
	}{
		{name: "key in section", set: []Setting{{"p2p.seeds", "ab@10.0.0.2:26656"}},
			want: []string{`seeds = "ab@10.0.0.2:26656"`, `laddr = "tcp://0.0.0.0:26656"`}},
		{name: "top-level key", set: []Setting{{"moniker", "validator0"}},
			want: []string{`moniker = "validator0"`, `version = "1.0.1"`}},
		{name: "nested section", set: []Setting{{"grpc.privileged.laddr", "tcp://127.0.0.1:26659"}},
			want: []string{`laddr = "tcp://127.0.0.1:26659"`, `laddr = "tcp://0.0.0.0:26656"`}},
		{name: "int bool float", set: []Setting{{"mempool.size", int64(10000)}, {"p2p.pex", false}, {"moniker", 2.5}},
			want: []string{"size = 10000", "pex = false", "moniker = 2.5"}},
		{name: "integral float stays an integer", set: []Setting{{"mempool.size", float64(10000)}},
			want: []string{"size = 10000"}},
		{name: "duration is a string", set: []Setting{{"moniker", 500 * time.Millisecond}},
			want: []string{`moniker = "500ms"`}},
		{name: "array", set: []Setting{{"moniker", []any{"a", int64(1)}}},
			want: []string{`moniker = ["a", 1]`}},
		{name: "escaping", set: []Setting{{"moniker", "a\"b\\c\nd\te\x01"}},
			want: []string{`moniker = "a\"b\\c\nd\te\u0001"`}},
		{name: "later setting wins", set: []Setting{{"moniker", "x"}, {"moniker", "y"}},
			want: []string{`moniker = "y"`}},
		{name: "unknown key", set: []Setting{{"p2p.no_such_key", 1}},
			wantErr: `config key "p2p.no_such_key" is not in this release's config.toml`},
		{name: "unknown section", set: []Setting{{"statesync.enable", true}},
			wantErr: `config key "statesync.enable" is not in this release's config.toml: cometbft@v9.9.9's config.toml has no [statesync] section`},
		{name: "key of a section only on top level", set: []Setting{{"size", 1}},
			wantErr: `config key "size" is not`},
		{name: "renamed key hint", set: []Setting{{"consensus.next_block_delay", "1s"}},
			wantErr: `set "consensus.timeout_commit" instead`},
		{name: "unsupported value", set: []Setting{{"moniker", map[string]int{}}},
			wantErr: `config key "moniker": cannot write a map[string]int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PatchConfig([]byte(small), tt.set, "cometbft@v9.9.9")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(got), "\n")
			for _, w := range tt.want {
				if !contains(lines, w) {
					t.Errorf("output has no line %q:\n%s", w, got)
				}
			}
			// Comments, layout and line count stay as they were.
			if n, m := strings.Count(string(got), "\n"), strings.Count(small, "\n"); n != m {
				t.Errorf("output has %d lines, input %d", n, m)
			}
			for _, keep := range []string{"# top comment", "# Address to listen for incoming connections", "#######", "[grpc.privileged]"} {
				if !contains(lines, keep) {
					t.Errorf("lost line %q", keep)
				}
			}
			// The result is valid TOML.
			var v map[string]any
			if err := toml.Unmarshal(got, &v); err != nil {
				t.Errorf("patched config is not valid TOML: %v\n%s", err, got)
			}
		})
	}
}

func TestPatchConfigEscapingRoundTrips(t *testing.T) {
	for _, s := range []string{`plain`, `q"uote`, `back\slash`, "new\nline", "tab\t", "ctl\x7f\x00", "ünï©ødé", ""} {
		got, err := PatchConfig([]byte(small), []Setting{{"moniker", s}}, "x")
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Moniker string }
		if err := toml.Unmarshal(got, &v); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if v.Moniker != s {
			t.Errorf("moniker %q read back as %q", s, v.Moniker)
		}
	}
}

func TestUnknownKeyIsTyped(t *testing.T) {
	_, err := PatchConfig([]byte(small), []Setting{{"p2p.nope", 1}}, "x")
	var uk *UnknownKeyError
	if !errors.As(err, &uk) || uk.Key != "p2p.nope" {
		t.Fatalf("err = %#v, want *UnknownKeyError for p2p.nope", err)
	}
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// fakeIDs gives every node a fixed, realistic-looking ID.
func fakeIDs(p *plan.Testnet) map[string]string {
	ids := map[string]string{}
	for _, n := range p.Nodes {
		sum := sha256.Sum256([]byte(n.Name))
		ids[n.Name] = hex.EncodeToString(sum[:20])
	}
	return ids
}

// loadPlan resolves an example manifest with every node on release version.
func loadPlan(t *testing.T, example, version string) *plan.Testnet {
	t.Helper()
	m, err := manifest.LoadFile(filepath.Join("..", "..", "..", "examples", example+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	rel := relOf(version)
	for _, n := range p.Nodes {
		n.Release = rel
		n.MetricsNamespace = rel.Name // the flavour's default, as Resolve records it
	}
	return p
}

// relOf reads a test's release: "v1.0.1" is cometbft's, "tendermint@v0.34.22"
// names its flavour.
func relOf(s string) release.Release {
	if name, version, ok := strings.Cut(s, "@"); ok {
		return release.Release{Name: name, Version: version}
	}
	return release.Release{Name: "cometbft", Version: s}
}

// TestGolden patches the pristine config.toml of each release (copied from
// `cometbft init --home /tmp/x`) for fixed plans and compares with
// testdata/<version>/<example>-<node>.config.toml.golden (go test -update).
func TestGolden(t *testing.T) {
	cases := []struct{ example, node string }{
		{"quickstart", "validator0"},
		{"seeds", "seed0"},
		{"seeds", "validator1"},
		{"seeds", "full0"},
		{"socket-app", "validator3"},
	}
	for _, version := range []string{"v1.0.1", "v0.38.17", "v0.39.4", "v0.40.0", "tendermint@v0.34.22"} {
		pristine, err := os.ReadFile(filepath.Join("testdata", version, "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(version+"/"+c.example+"-"+c.node, func(t *testing.T) {
				p := loadPlan(t, c.example, version)
				n := p.Node(c.node)
				if n == nil {
					t.Fatalf("no node %s in %s", c.node, c.example)
				}
				ids := fakeIDs(p)
				set, err := Settings(p, n, ids)
				if err != nil {
					t.Fatal(err)
				}
				got, err := PatchConfig(pristine, set, n.Release.String())
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", version, c.example+"-"+c.node+".config.toml.golden")
				testenv.Golden(t, golden, got)
				checkConfig(t, got, p, n, ids)
			})
		}
	}
}

// checkConfig reads a patched config back as TOML and checks what benchnet
// promises about it, independent of the golden file.
func checkConfig(t *testing.T, cfg []byte, p *plan.Testnet, n *plan.Node, ids map[string]string) {
	t.Helper()
	var c struct {
		Moniker  string `toml:"moniker"`
		ProxyApp string `toml:"proxy_app"`
		P2P      struct {
			Laddr, ExternalAddress string
			PersistentPeers        string `toml:"persistent_peers"`
			Seeds                  string `toml:"seeds"`
			SeedMode               bool   `toml:"seed_mode"`
			AddrBookStrict         bool   `toml:"addr_book_strict"`
			AllowDuplicateIP       bool   `toml:"allow_duplicate_ip"`
			Pex                    bool   `toml:"pex"`
		} `toml:"p2p"`
		RPC struct {
			Laddr string `toml:"laddr"`
		} `toml:"rpc"`
		Instrumentation struct {
			Prometheus           bool   `toml:"prometheus"`
			PrometheusListenAddr string `toml:"prometheus_listen_addr"`
			Namespace            string `toml:"namespace"`
		} `toml:"instrumentation"`
	}
	if err := toml.Unmarshal(cfg, &c); err != nil {
		t.Fatalf("patched config is not valid TOML: %v", err)
	}
	peers := func(names []string) string {
		var s []string
		for _, name := range names {
			s = append(s, fmt.Sprintf("%s@%s:26656", ids[name], p.Node(name).Addr))
		}
		return strings.Join(s, ",")
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"moniker", c.Moniker, n.Name},
		{"rpc.laddr", c.RPC.Laddr, "tcp://0.0.0.0:26657"},
		{"p2p.persistent_peers", c.P2P.PersistentPeers, peers(n.PersistentPeers)},
		{"p2p.seeds", c.P2P.Seeds, peers(n.Seeds)},
		{"p2p.seed_mode", c.P2P.SeedMode, n.Role == "seed"},
		{"p2p.pex", c.P2P.Pex, true},
		{"p2p.addr_book_strict", c.P2P.AddrBookStrict, false},
		{"p2p.allow_duplicate_ip", c.P2P.AllowDuplicateIP, true},
		{"instrumentation.prometheus", c.Instrumentation.Prometheus, true},
		{"instrumentation.prometheus_listen_addr", c.Instrumentation.PrometheusListenAddr, ":26660"},
		{"instrumentation.namespace (the plan's)", c.Instrumentation.Namespace, n.Namespace()},
		{"proxy_app", c.ProxyApp, map[string]string{"kvstore": "kvstore", "kvstore-socket": AppAddr}[n.App]},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: %s = %v, want %v", n.Name, ck.what, ck.got, ck.want)
		}
	}
	// Every override of the manifest is in the file with its value.
	var all map[string]any
	_ = toml.Unmarshal(cfg, &all)
	for k, want := range n.Config {
		var v any = all
		for _, part := range strings.Split(k, ".") {
			m, _ := v.(map[string]any)
			v = m[part]
		}
		if fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("%s: override %s = %v, want %v", n.Name, k, v, want)
		}
	}
}

// TestScaleTimeouts: on every release's own config.toml, time_scale
// stretches each consensus timeout the file has (its default, or the
// manifest's value when given) and nothing else; 1 changes nothing.
func TestScaleTimeouts(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/config.toml")
	if err != nil || len(dirs) < 4 {
		t.Fatalf("release configs: %v %v", dirs, err)
	}
	for _, path := range dirs {
		cfg, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Consensus map[string]any }
		if err := toml.Unmarshal(cfg, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var keys []string
		for k, v := range doc.Consensus {
			if s, ok := v.(string); ok && strings.HasPrefix(k, "timeout_") {
				if _, err := time.ParseDuration(s); err == nil {
					keys = append(keys, k)
				}
			}
		}
		if len(keys) < 2 {
			t.Fatalf("%s: only %v timeouts", path, keys)
		}
		if got, err := ScaleTimeouts(cfg, nil, 1); err != nil || got != nil {
			t.Errorf("%s: scale 1 gives %v, %v", path, got, err)
		}
		given := []Setting{{Key: "consensus.timeout_propose", Value: "7s"}}
		got, err := ScaleTimeouts(cfg, given, 10)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(got) != len(keys) {
			t.Errorf("%s: %d settings for %d timeouts %v: %v", path, len(got), len(keys), keys, got)
		}
		for _, s := range got {
			k := strings.TrimPrefix(s.Key, "consensus.")
			want, _ := time.ParseDuration(doc.Consensus[k].(string))
			if s.Key == "consensus.timeout_propose" {
				want = 7 * time.Second
			}
			if d, err := time.ParseDuration(s.Value.(string)); err != nil || d != 10*want {
				t.Errorf("%s: %s = %v, want %v", path, s.Key, s.Value, 10*want)
			}
		}
		// The patched file holds the scaled values.
		out, err := PatchConfig(cfg, append(given, got...), filepath.Base(filepath.Dir(path)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.Contains(string(out), `timeout_propose = "1m10s"`) {
			t.Errorf("%s: patched file lacks timeout_propose = 1m10s", path)
		}
	}
	if _, err := ScaleTimeouts([]byte("[consensus]\ntimeout_commit = \"soon\"\n"), nil, 2); err == nil {
		t.Error("a timeout that is no duration: no error")
	}
}
