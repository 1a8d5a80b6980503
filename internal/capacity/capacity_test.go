package capacity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

func resolve(t *testing.T, toml string) (*manifest.Manifest, *plan.Testnet) {
	t.Helper()
	m, err := manifest.Parse("m.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, p
}

func group(n int, topology string) string {
	return fmt.Sprintf("name = \"c\"\n[network]\nsubnet = \"10.50.0.0/16\"\ntopology = %q\n[node.validator]\ncount = %d\n", topology, n)
}

func TestNeedAndCheck(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir()) // the built-in default profile
	box := Machine{Cores: 2, MemAvail: 8 << 30}
	cases := []struct {
		name      string
		toml      string
		links     int
		cpu       float64 // expected idle cores
		wantRefus string
	}{
		// 4 nodes x (0.02 + (3-3) x 0.004)
		{"quickstart fits", group(4, "full"), 6, 0.08, ""},
		// 200 x (0.02 + 196 x 0.004) = 160.8 cores: far beyond 2
		{"QA size full mesh refused", group(200, "full"), 19900, 160.8, "200 nodes, 19900 links need idle CPU 160.80 cores > 1.00"},
		// 64 x (0.02 + 60 x 0.004) = 16.64
		{"64 full mesh refused", group(64, "full"), 2016, 16.64, "idle CPU 16.64 cores"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p := resolve(t, c.toml)
			e := Need(p)
			if e.Links != c.links || fmt.Sprintf("%.2f", e.CPU) != fmt.Sprintf("%.2f", c.cpu) {
				t.Errorf("estimate %s; want %d links, %.2f cores", e, c.links, c.cpu)
			}
			err := Check(e, box)
			switch {
			case c.wantRefus == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.wantRefus != "" && (err == nil || !strings.Contains(err.Error(), c.wantRefus)):
				t.Errorf("got %v, want a refusal containing %q", err, c.wantRefus)
			}
		})
	}
}

func TestMeasuredProfileUsed(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir())
	_, p := resolve(t, group(4, "full"))
	rel := p.Nodes[0].Release.String()
	if err := Save(Profile{Release: rel, CPU: 0.5, RSS: 100 << 20, Peers: 3, Nodes: 4, Measured: time.Now()}); err != nil {
		t.Fatal(err)
	}
	e := Need(p)
	if fmt.Sprintf("%.2f", e.CPU) != "2.00" || e.RSS != 400<<20 {
		t.Errorf("with a measured 0.5 cores/100 MiB per node: %s", e)
	}
	if !strings.Contains(strings.Join(e.Sources, ";"), "measured") {
		t.Errorf("sources do not say measured: %v", e.Sources)
	}
	// Measured once: a second measurement does not replace the first.
	if err := Save(Profile{Release: rel, CPU: 9, RSS: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if Lookup(rel).CPU != 0.5 {
		t.Errorf("the cached profile was replaced")
	}
}

func TestLargeDefaults(t *testing.T) {
	m, _ := resolve(t, "name = \"c\"\n[network]\nsubnet = \"10.50.0.0/16\"\n[node.validator]\ncount = 40\n[node.validator.config]\n\"consensus.timeout_commit\" = \"5s\"\n")
	notes := LargeDefaults(m)
	want := []string{`network.topology = "random" (not a full mesh: 40 nodes)`, `node.validator.config."consensus.timeout_propose" = "10s"`}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	if m.Node["validator"].Config["consensus.timeout_commit"] != "5s" {
		t.Error("a timeout the manifest set was replaced")
	}
	// An explicit full mesh stays, and small testnets are left alone.
	m, _ = resolve(t, group(40, "full"))
	if LargeDefaults(m); m.Network.Topology != "full" {
		t.Error("an explicit topology was replaced")
	}
	m, _ = resolve(t, "name = \"c\"\n[node.validator]\ncount = 4\n")
	if notes := LargeDefaults(m); notes != nil {
		t.Errorf("4 nodes got large defaults: %v", notes)
	}
}

func TestReadyTimeout(t *testing.T) {
	for _, c := range []struct {
		e    Estimate
		want time.Duration
	}{
		{Estimate{Nodes: 4, Links: 6}, 60 * time.Second},
		{Estimate{Nodes: 64, Links: 256}, 60*time.Second + 120*time.Second + 25*time.Second},
	} {
		if got := ReadyTimeout(60*time.Second, c.e); got != c.want {
			t.Errorf("%s: %s, want %s", c.e, got, c.want)
		}
	}
}
