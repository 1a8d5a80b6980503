package plan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/testenv"
)

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
			testenv.Golden(t, golden, got)
		})
	}
}

const seededManifest = `
name = "seeded"
seed = %d
[network]
subnet = "10.9.0.0/16"
topology = "random"
peers = 2
zones = "aws"
[node.validator]
count = 120
zone = "random"
[node.full]
count = 6
zones = ["Tokyo", "Sydney"]
`

func resolveSeed(t *testing.T, seed int64) (*Testnet, []byte) {
	t.Helper()
	m, err := manifest.Parse("seeded.toml", []byte(fmt.Sprintf(seededManifest, seed)))
	if err != nil {
		t.Fatal(err)
	}
	tn, err := Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tn.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return tn, data
}

func zonesOf(tn *Testnet) string {
	var z []string
	for _, n := range tn.Nodes {
		z = append(z, n.Zone)
	}
	return strings.Join(z, ",")
}

// The seed drives every random choice: the same manifest and seed give the
// same plan.json byte for byte, another seed another zone assignment and
// other peers. (Resolution draws zones and peers; a plan that ignored the
// seed fails the second half, one that drew from the clock the first.)
func TestSeeded(t *testing.T) {
	zoneDraws, peerDraws := map[string]int64{}, map[string]int64{}
	for seed := int64(0); seed < 8; seed++ {
		a, aj := resolveSeed(t, seed)
		_, bj := resolveSeed(t, seed)
		if !bytes.Equal(aj, bj) {
			t.Fatalf("seed %d: two resolutions differ", seed)
		}
		z := zonesOf(a)
		if prev, ok := zoneDraws[z]; ok {
			t.Errorf("seeds %d and %d draw the same zones", prev, seed)
		}
		zoneDraws[z] = seed
		var peers []string
		for _, n := range a.Nodes {
			peers = append(peers, strings.Join(n.PersistentPeers, " "))
		}
		p := strings.Join(peers, ";")
		if prev, ok := peerDraws[p]; ok {
			t.Errorf("seeds %d and %d draw the same peers", prev, seed)
		}
		peerDraws[p] = seed

		// What is drawn stays inside what the manifest allows.
		aws := manifest.BuiltinZoneSets["aws"]
		used := map[string]int{}
		for _, n := range a.Nodes {
			switch n.Group {
			case "validator":
				if !slices.Contains(aws, n.Zone) {
					t.Fatalf("seed %d: %s drew zone %q outside the aws set", seed, n.Name, n.Zone)
				}
				used[n.Zone]++
			case "full":
				if want := []string{"Tokyo", "Sydney"}[(n.Index-120)%2]; n.Zone != want {
					t.Errorf("seed %d: %s zone %s, want %s (round-robin, no draw)", seed, n.Name, n.Zone, want)
				}
			}
		}
		// 120 uniform draws over 13 zones: every zone comes up (a draw that
		// always picked the first zone, or a few, fails here).
		if len(used) != len(aws) {
			t.Errorf("seed %d: 120 random zones use only %d of %d zones: %v", seed, len(used), len(aws), used)
		}
		checkGraph(t, a, 2)
	}
}

// checkGraph: the nodes form one connected graph in which every
// node has at least k links, none twice and never to itself, and the graph
// is sparse (average degree below k+1).
func checkGraph(t *testing.T, tn *Testnet, k int) {
	t.Helper()
	adj := map[string]map[string]bool{}
	var names []string
	for _, n := range tn.Nodes {
		names = append(names, n.Name)
		if len(n.Seeds) != 0 {
			t.Errorf("%s seeds %v, want none", n.Name, n.Seeds)
		}
		for _, p := range n.PersistentPeers {
			if p == n.Name || adj[n.Name][p] || adj[p][n.Name] {
				t.Errorf("%s dials %s twice or itself", n.Name, p)
			}
			if adj[n.Name] == nil {
				adj[n.Name] = map[string]bool{}
			}
			if adj[p] == nil {
				adj[p] = map[string]bool{}
			}
			adj[n.Name][p], adj[p][n.Name] = true, true
		}
	}
	links := 0
	for _, name := range names {
		if len(adj[name]) < k {
			t.Errorf("%s has %d links, want at least %d", name, len(adj[name]), k)
		}
		links += len(adj[name])
	}
	if avg := float64(links) / float64(len(names)); avg >= float64(k+1) {
		t.Errorf("average degree %.2f, want below %d: not sparse", avg, k+1)
	}
	seen := map[string]bool{names[0]: true}
	queue := []string{names[0]}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for p := range adj[cur] {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if len(seen) != len(names) {
		t.Errorf("random topology not connected: %d of %d nodes reachable", len(seen), len(names))
	}
}

// RandomDials over many sizes: connected, at least k links per node, no
// self or repeated links.
func TestRandomDials(t *testing.T) {
	for n := 2; n <= 40; n += 3 {
		for _, k := range []int{1, 2, 3, 8, 39} {
			if k > n-1 {
				continue
			}
			rng := rand.New(rand.NewPCG(uint64(n*100+k), 1))
			dials := RandomDials(n, k, rng)
			linked := map[[2]int]bool{}
			parent := make([]int, n)
			for i := range parent {
				parent[i] = i
			}
			var find func(int) int
			find = func(i int) int {
				if parent[i] != i {
					parent[i] = find(parent[i])
				}
				return parent[i]
			}
			degree := make([]int, n)
			for a, ds := range dials {
				for _, b := range ds {
					degree[a]++
					degree[b]++
					key := [2]int{min(a, b), max(a, b)}
					if a == b || linked[key] {
						t.Errorf("n=%d k=%d: link %d-%d self or repeated", n, k, a, b)
					}
					linked[key] = true
					parent[find(a)] = find(b)
				}
			}
			for i := range n {
				if degree[i] < k {
					t.Errorf("n=%d k=%d: node %d has %d links", n, k, i, degree[i])
				}
				if find(i) != find(0) {
					t.Fatalf("n=%d k=%d: not connected", n, k)
				}
			}
		}
	}
}

// A zone CSV named relative to the manifest is opened from the plan by its
// absolute path, whatever the working directory of the run.
func TestZonesPathAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lat.csv"), []byte("From/to,a,b\na,0,5\nb,5,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(mf, []byte("[network]\nzones = \"lat.csv\"\n[node.validator]\ncount = 2\nzones = [\"a\", \"b\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	tn := resolveFile(t, mf)
	if want := filepath.Join(dir, "lat.csv"); tn.Network.Zones != want {
		t.Errorf("plan zones %q, want %q", tn.Network.Zones, want)
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

// Each node records the namespace its series are exported under: the
// flavour's default, or the group's instrumentation.namespace override.
func TestMetricsNamespace(t *testing.T) {
	m, err := manifest.Parse("ns.toml", []byte(`name = "ns"
[network]
subnet = "10.213.9.0/24"
[node.validator]
count = 2
release = "tendermint@v0.34.22"
[node.full]
count = 1
role = "full"
release = "cometbft@v1.0.1"
[node.full.config]
"instrumentation.namespace" = "renamed"
[node.lite]
count = 1
role = "full"
release = "cometbft@v0.38.17"
`))
	if err != nil {
		t.Fatal(err)
	}
	tn, err := Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"validator0": "tendermint", "validator1": "tendermint", "full0": "renamed", "lite0": "cometbft"}
	for _, n := range tn.Nodes {
		if n.MetricsNamespace != want[n.Name] || n.Namespace() != want[n.Name] {
			t.Errorf("%s (%s): namespace %q (%q), want %q", n.Name, n.Release, n.MetricsNamespace, n.Namespace(), want[n.Name])
		}
	}
	if r := tn.Node("validator0").Release; r.Name != "tendermint" || r.Version != "v0.34.22" {
		t.Errorf("release %+v, want the flavour tendermint at v0.34.22", r)
	}
	// A plan written before the field existed reads as CometBFT's.
	old, err := ReadJSON([]byte(`{"name":"old","nodes":[{"name":"v0","release":{"name":"cometbft","version":"v1.0.1"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Nodes[0].Namespace(); got != "cometbft" {
		t.Errorf("old plan: namespace %q, want cometbft", got)
	}
}
