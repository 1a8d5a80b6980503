package gossipsub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/prometheus/common/expfmt"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// The manifest's defaults are the library's: the plan records the values
// the hosts really use.
func TestDefaultsAreTheLibrarys(t *testing.T) {
	p := pubsub.DefaultGossipSubParams()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"D", spec.DefaultD, p.D},
		{"Dlo", spec.DefaultDlo, p.Dlo},
		{"Dhi", spec.DefaultDhi, p.Dhi},
		{"Dlazy", spec.DefaultDlazy, p.Dlazy},
		{"heartbeat", spec.DefaultHeartbeat, p.HeartbeatInterval},
	} {
		if c.got != c.want {
			t.Errorf("%s: manifest default %v, go-libp2p-pubsub %v", c.name, c.got, c.want)
		}
	}
}

func TestKeyIsFixedBySeedAndIndex(t *testing.T) {
	if PeerID(42, 3) != PeerID(42, 3) {
		t.Fatal("same seed and index, different peer IDs")
	}
	seen := map[string]string{}
	for _, s := range []int64{42, 43} {
		for i := 0; i < 5; i++ {
			id := PeerID(s, i).String()
			if prev, dup := seen[id]; dup {
				t.Fatalf("seed %d index %d: same peer ID as %s", s, i, prev)
			}
			seen[id] = fmt.Sprint(s, "/", i)
		}
	}
}

func TestParamsKeepLibraryInvariants(t *testing.T) {
	for _, d := range []int{2, 3, 6, 12} {
		c := &Config{Params: spec.Gossipsub{D: d, Dlo: max(1, d-1), Dhi: 2 * d, Dlazy: 6}}
		p := c.params()
		if !(p.Dout < p.Dlo && p.Dout < p.D/2) || p.Dscore > p.Dhi {
			t.Errorf("D=%d: Dout %d Dscore %d break the library's checks", d, p.Dout, p.Dscore)
		}
	}
}

// Three real hosts on loopback in a line a-b-c: a message published at a
// reaches b from a and c from b, every trace says so, and /ready reports
// the planned peers. By name, as on a swarm (plan.Node.Host), the hosts
// listen on every address and dial /dns4/localhost.
func TestLineOfHostsOnLoopback(t *testing.T) {
	for _, host := range []string{"", "localhost"} {
		t.Run("host="+host, func(t *testing.T) { lineOfHosts(t, host) })
	}
}

func lineOfHosts(t *testing.T, host string) {
	dir := t.TempDir()
	const n = 3
	p := &plan.Testnet{Seed: 7, Topology: "line"}
	if err := p.SetKindTables(&spec.Tables{Gossipsub: spec.Gossipsub{D: 6, Dlo: 5, Dhi: 12, Dlazy: 6,
		Heartbeat: rundir.Duration{Duration: 100 * time.Millisecond}, OutboundQueue: 32, ValidateQueue: 32}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p.Nodes = append(p.Nodes, &plan.Node{Name: fmt.Sprintf("g%d", i), Host: host, Index: i, Addr: netip.MustParseAddr("127.0.0.1"),
			P2PPort: testenv.FreePort(t), RPCPort: testenv.FreePort(t), PrometheusPort: testenv.FreePort(t)})
	}
	for i := 0; i+1 < n; i++ {
		p.Nodes[i].PersistentPeers = []string{p.Nodes[i+1].Name}
	}
	if cfg := HostConfig(p, p.Nodes[0], ""); host != "" && (cfg.listenIP() != "0.0.0.0" || cfg.Peers[0].multiaddr() != fmt.Sprintf("/dns4/localhost/tcp/%d", p.Nodes[1].P2PPort)) {
		t.Fatalf("by name: listens on %s, dials %s", cfg.listenIP(), cfg.Peers[0].multiaddr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, n)
	for _, nd := range p.Nodes {
		cfg := HostConfig(p, nd, filepath.Join(dir, nd.Name+".csv"))
		go func() { done <- Run(ctx, cfg, io.Discard) }()
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for i := 0; i < n; i++ {
			if err := <-done; err != nil {
				t.Errorf("host: %v", err)
			}
		}
	}
	defer stop()

	d := &Driver{}
	deadline := time.Now().Add(20 * time.Second)
	for _, nd := range p.Nodes {
		for {
			ok, status := d.Ready(ctx, nd)
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready: %s", nd.Name, status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The middle host serves only the served families, its connections
	// among them.
	fams := scrape(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.Nodes[1].PrometheusPort))
	for name := range fams {
		if !ServedFamilies[name] {
			t.Errorf("metrics: family %s served, not in ServedFamilies", name)
		}
	}
	for name, want := range map[string]float64{"benchnet_gossip_planned_peers": 2, "benchnet_gossip_planned_peers_connected": 2} {
		if got := fams[name]; got != want {
			t.Errorf("metrics: %s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"process_cpu_seconds_total", "libp2p_swarm_connections_opened_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("metrics: %s not served", name)
		}
	}
	// Meshes form at heartbeats; then publish from the head of the line.
	time.Sleep(500 * time.Millisecond)
	const id = "0123456789abcdef"
	resp, err := http.Post(ControlURL(p.Nodes[0])+"/publish?id="+id+"&size=1000", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("publish: %s", resp.Status)
	}
	// A bad request is refused, not published.
	if resp, err := http.Post(ControlURL(p.Nodes[0])+"/publish?id=short&size=1000", "", nil); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad publish: %v %v", resp.Status, err)
	}
	// What `benchnet status` shows (node.Statuser): neighbours connected
	// of those planned, and the messages each host published.
	for i, want := range [][2]string{{"1/1", "1"}, {"2/2", "0"}} {
		v, err := d.Status(ctx, p.Nodes[i])
		if err != nil || len(v) != len(d.StatusColumns()) || v[0] != want[0] || v[2] != want[1] {
			t.Errorf("status of %s: %q %v, want peers %s and published %s", p.Nodes[i].Name, v, err, want[0], want[1])
		}
	}
	time.Sleep(time.Second)
	stop()

	want := map[string]rundir.GossipEvent{
		"g0": {Node: "g0", Kind: rundir.GossipPublish, MsgID: id, Size: 1000},
		"g1": {Node: "g1", Kind: rundir.GossipDeliver, MsgID: id, Peer: "g0", Size: 1000},
		"g2": {Node: "g2", Kind: rundir.GossipDeliver, MsgID: id, Peer: "g1", Size: 1000},
	}
	for name, w := range want {
		rows, _, err := rundir.GossipTraceCSV.ReadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		var got []rundir.GossipEvent
		for _, r := range rows {
			if r.MsgID == id {
				r.TimeNs = 0
				got = append(got, r)
			}
		}
		if len(got) != 1 || got[0] != w {
			t.Errorf("%s trace: %+v, want exactly %+v", name, got, w)
		}
	}
}

// scrape returns each family of url's exposition with the sum of its
// samples' values (counters and gauges).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[name] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
