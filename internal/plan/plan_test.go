package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func resolveFile(t *testing.T, path string) *Testnet {
	t.Helper()
	m, err := manifest.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tn, err := Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// The plan of every example is pinned by a golden file, so any change to
// resolution shows up in review.
func TestGoldenPlans(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.toml")
	if len(files) < 5 {
		t.Fatalf("found %d examples, want at least 5", len(files))
	}
	for _, f := range files {
		ex := strings.TrimSuffix(filepath.Base(f), ".toml")
		t.Run(ex, func(t *testing.T) {
			got, err := resolveFile(t, "../../examples/"+ex+".toml").JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", ex+".plan.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan of %s differs from %s (go test -update to accept):\n%s", ex, golden, got)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := resolveFile(t, "../../examples/seeds.toml").JSON()
	for i := 0; i < 20; i++ {
		b, _ := resolveFile(t, "../../examples/seeds.toml").JSON()
		if !bytes.Equal(a, b) {
			t.Fatalf("resolution %d differs from the first", i)
		}
	}
}

func TestResolve(t *testing.T) {
	tn := resolveFile(t, "../../examples/seeds.toml")
	var names []string
	for i, n := range tn.Nodes {
		names = append(names, n.Name+"="+n.Addr.String())
		if n.Index != i {
			t.Errorf("%s: index %d, want %d", n.Name, n.Index, i)
		}
		if !tn.Subnet.Contains(n.Addr) || n.Addr == tn.Gateway {
			t.Errorf("%s: address %s outside subnet or on the gateway", n.Name, n.Addr)
		}
	}
	if got, want := strings.Join(names, " "), "seed0=10.213.3.2 validator0=10.213.3.3 validator1=10.213.3.4 validator2=10.213.3.5 validator3=10.213.3.6 full0=10.213.3.7 full1=10.213.3.8"; got != want {
		t.Errorf("nodes:\n got %s\nwant %s", got, want)
	}
	if got := tn.Gateway.String(); got != "10.213.3.1" {
		t.Errorf("gateway %s", got)
	}
	v := tn.Node("validator2")
	if len(v.PersistentPeers) != 0 || strings.Join(v.Seeds, ",") != "seed0" {
		t.Errorf("seeds topology: validator2 peers %v seeds %v", v.PersistentPeers, v.Seeds)
	}
	if s := tn.Node("seed0"); len(s.Seeds) != 0 {
		t.Errorf("a lone seed has no seeds, got %v", s.Seeds)
	}
	if d := tn.Node("full1").StartDelay.String(); d != "5s" {
		t.Errorf("start delay %s", d)
	}
	if len(tn.Validators()) != 4 {
		t.Errorf("validators: %d", len(tn.Validators()))
	}

	full := resolveFile(t, "../../examples/quickstart.toml")
	for _, n := range full.Nodes {
		if len(n.PersistentPeers) != len(full.Nodes)-1 {
			t.Errorf("full mesh: %s has %d peers", n.Name, len(n.PersistentPeers))
		}
		for _, p := range n.PersistentPeers {
			if p == n.Name {
				t.Errorf("%s peers with itself", n.Name)
			}
		}
	}
	if got := full.Nodes[0].RPCURL(); got != "http://10.213.0.2:26657" {
		t.Errorf("rpc url %s", got)
	}
	if got := full.Releases(); len(got) != 1 || got[0].String() != "cometbft@v1.0.1" {
		t.Errorf("releases %v", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	tn := resolveFile(t, "../../examples/quickstart.toml")
	data, _ := tn.JSON()
	back, err := ReadJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.JSON()
	if !bytes.Equal(data, again) {
		t.Errorf("plan does not survive a JSON round trip")
	}
}
