package linkem

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// testPlan is a plan with one node per given zone, addressed from 10.213.250.2.
func testPlan(nw manifest.Network, zones ...string) *plan.Testnet {
	p := &plan.Testnet{Name: "t", Seed: 7, Network: nw}
	addr := netip.MustParseAddr("10.213.250.1")
	for i, z := range zones {
		addr = addr.Next()
		p.Nodes = append(p.Nodes, &plan.Node{Name: fmt.Sprintf("validator%d", i), Index: i, Zone: z, Addr: addr})
	}
	return p
}

func TestBuild(t *testing.T) {
	p := testPlan(manifest.Network{Zones: "testdata/zones3.csv", Jitter: "10%", Loss: "0.5%", Bandwidth: "10mbit"},
		"east", "west", "far", "east")
	m, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b string
		want Link
	}{
		{"validator0", "validator1", Link{20 * time.Millisecond, 2 * time.Millisecond, 0.005}},
		{"validator0", "validator2", Link{75500 * time.Microsecond, 7550 * time.Microsecond, 0.005}},
		{"validator2", "validator0", Link{80 * time.Millisecond, 8 * time.Millisecond, 0.005}},  // asymmetric matrix
		{"validator0", "validator3", Link{1 * time.Millisecond, 100 * time.Microsecond, 0.005}}, // same zone: the diagonal
	} {
		got, err := m.Link(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("Link(%s, %s) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
	s := m.Snapshot()
	if s.Nodes[1].Rate != 10_000_000 || s.Nodes[1].QueueBytes != 125_000 {
		t.Errorf("node 1 rate %d queue %d, want 10mbit and 125000 bytes (100ms)", s.Nodes[1].Rate, s.Nodes[1].QueueBytes)
	}

	abs, err := Build(testPlan(manifest.Network{Zones: "aws", Jitter: "2ms"}, "Tokyo", "Seoul"))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := abs.Link("validator0", "validator1"); l.Jitter != 2*time.Millisecond || l.Delay == 0 || l.Loss != 0 {
		t.Errorf("absolute jitter: %v", l)
	}
	if s := abs.Snapshot(); s.Nodes[0].Rate != 0 {
		t.Errorf("no bandwidth set, rate = %d", s.Nodes[0].Rate)
	}

	none, err := Build(testPlan(manifest.Network{}, "local", "local"))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := none.Link("validator0", "validator1"); l != (Link{}) {
		t.Errorf("no zone set: %v, want a perfect link", l)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nw    manifest.Network
		zones []string
		want  string
	}{
		{"unknown zone", manifest.Network{Zones: "aws"}, []string{"Tokyo", "Mars"},
			`node validator1: zone "Mars" is not in zone set aws (known: N_Virginia, Canada`},
		{"bad csv path", manifest.Network{Zones: "nope.csv"}, []string{"a"}, "neither a built-in zone set"},
		{"bad jitter", manifest.Network{Jitter: "lots"}, []string{"a"}, "network.jitter"},
		{"bad loss", manifest.Network{Loss: "1"}, []string{"a"}, "network.loss"},
		{"bad bandwidth", manifest.Network{Bandwidth: "10MB"}, []string{"a"}, "network.bandwidth"},
	} {
		_, err := Build(testPlan(tc.nw, tc.zones...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestOverridesPartitionHeal(t *testing.T) {
	m, err := Build(testPlan(manifest.Network{Zones: "testdata/zones3.csv"}, "east", "west", "far"))
	if err != nil {
		t.Fatal(err)
	}
	v0 := m.Snapshot().Version
	if err := m.SetLink("validator0", "validator1", Link{Delay: 5 * time.Millisecond, Loss: 0.2}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetRate("validator2", 1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := m.Partition([]string{"validator2"}, []string{"validator0", "validator1"}); err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	if s.Version <= v0 {
		t.Errorf("version did not advance: %d → %d", v0, s.Version)
	}
	check := func(a, b string, want Link) {
		t.Helper()
		if got, _ := m.Link(a, b); got != want {
			t.Errorf("%s→%s = %v, want %v", a, b, got, want)
		}
	}
	check("validator0", "validator1", Link{Delay: 5 * time.Millisecond, Loss: 0.2})
	check("validator1", "validator0", Link{Delay: 20 * time.Millisecond}) // one direction only
	check("validator2", "validator0", Link{Delay: 80 * time.Millisecond, Loss: 1})
	check("validator1", "validator2", Link{Delay: 60 * time.Millisecond, Loss: 1})
	if s.Nodes[2].Rate != 1_000_000 || s.Nodes[2].QueueBytes != MinQueueBytes {
		t.Errorf("rate override: %+v", s.Nodes[2])
	}
	m.Heal()
	check("validator0", "validator1", Link{Delay: 20 * time.Millisecond})
	check("validator2", "validator0", Link{Delay: 80 * time.Millisecond})
	if m.Snapshot().Nodes[2].Rate != 0 {
		t.Errorf("heal kept the rate override")
	}
	for _, err := range []error{
		m.SetLink("validator0", "nobody", Link{}),
		m.SetLink("validator0", "validator0", Link{}),
		m.SetLink("validator0", "validator1", Link{Loss: 2}),
		m.Partition([]string{"ghost"}, []string{"validator0"}),
		m.SetRate("ghost", 1),
	} {
		if err == nil {
			t.Error("want an error")
		}
	}
}

// TestBuildUniform: [network].delay, jitter, loss and bandwidth apply to
// every ordered pair alike, and delay adds to a zone matrix's.
func TestBuildUniform(t *testing.T) {
	m, err := Build(testPlan(manifest.Network{Delay: "100ms", Jitter: "10%", Loss: "0.1%", Bandwidth: "10mbit"},
		"local", "local", "local"))
	if err != nil {
		t.Fatal(err)
	}
	want := Link{100 * time.Millisecond, 10 * time.Millisecond, 0.001}
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			if a == b {
				continue
			}
			got, err := m.Link(fmt.Sprintf("validator%d", a), fmt.Sprintf("validator%d", b))
			if err != nil || got != want {
				t.Errorf("Link(%d, %d) = %v, %v; want %v", a, b, got, err, want)
			}
		}
	}
	z, err := Build(testPlan(manifest.Network{Zones: "testdata/zones3.csv", Delay: "100ms"}, "east", "west"))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := z.Link("validator0", "validator1"); l.Delay != 120*time.Millisecond {
		t.Errorf("zones + delay: %v, want 20ms + 100ms", l)
	}
	if _, err := Build(testPlan(manifest.Network{Delay: "-1ms"}, "local")); err == nil || !strings.Contains(err.Error(), "network.delay") {
		t.Errorf("bad delay: %v", err)
	}
}
