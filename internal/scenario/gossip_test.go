package scenario

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

const (
	subnetGossipLine  = "10.213.240.0/24"
	subnetGossipKill  = "10.213.241.0/24"
	subnetGossipDelay = "10.213.250.0/24"
	subnetGossipFull  = "10.213.251.0/24"
)

var (
	hostExeOnce sync.Once
	hostExe     string
	hostExeErr  error
)

// benchnetExe builds the benchnet command once: the gossipsub hosts are
// `benchnet node gossipsub`, which a test binary is not.
func benchnetExe(t *testing.T) string {
	t.Helper()
	hostExeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "benchnet-host-")
		if err != nil {
			hostExeErr = err
			return
		}
		hostExe = filepath.Join(dir, "benchnet")
		out, err := exec.Command("go", "build", "-o", hostExe, "../../cmd/benchnet").CombinedOutput()
		if err != nil {
			hostExeErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if hostExeErr != nil {
		t.Fatal(hostExeErr)
	}
	return hostExe
}

func gossipLine(t *testing.T, subnet string, n int, publish string) *manifest.Manifest {
	t.Helper()
	return gossipNet(t, subnet, "line", "", n, publish)
}

// gossipNet is a gossip manifest: n hosts on topology with extra [network]
// keys (TOML lines) and the [publish] table's body.
func gossipNet(t *testing.T, subnet, topology, network string, n int, publish string) *manifest.Manifest {
	t.Helper()
	text := fmt.Sprintf("name = \"gossip-test\"\nseed = 7\n[network]\nsubnet = %q\ntopology = %q\n%s"+
		"[node.gossip]\nkind = \"gossipsub\"\ncount = %d\n[gossipsub]\nheartbeat = \"200ms\"\n[publish]\n%s", subnet, topology, network, n, publish)
	m, err := manifest.Parse("gossip-test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// deliveries reads a host's trace: the deliveries' forwarding peers by
// message.
func deliveries(t *testing.T, dir, node string) map[string]string {
	t.Helper()
	rows, _, err := rundir.GossipTraceCSV.ReadFile(filepath.Join(dir, rundir.GossipTraceDir, node+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		if r.Kind == rundir.GossipDeliver {
			if _, dup := out[r.MsgID]; dup {
				t.Errorf("%s: %s delivered twice", node, r.MsgID)
			}
			out[r.MsgID] = r.Peer
		}
	}
	return out
}

// A line of hosts under `benchnet run`: every message published at one end
// reaches every host, each from its predecessor (N-1 hops to the far end);
// the publisher kept its schedule.
func TestGossipLine(t *testing.T) {
	needRoot(t)
	exe := benchnetExe(t)
	const n, count = 5, 40
	m := gossipLine(t, subnetGossipLine, n, fmt.Sprintf("rate = 20\ncount = %d\nsource = \"gossip0\"\nwarmup = \"2s\"\ncooldown = \"2s\"\n", count))
	var log strings.Builder
	out, err := Gossip(context.Background(), m, Options{Up: testnet.Options{Output: t.TempDir(), HostExecutable: exe}, Log: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	pub, _, err := rundir.PublishedCSV.ReadFile(filepath.Join(out.RunDir, rundir.PublishedCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != count {
		t.Fatalf("published.csv: %d rows, want %d", len(pub), count)
	}
	for i := 1; i < n; i++ {
		node, prev := fmt.Sprintf("gossip%d", i), fmt.Sprintf("gossip%d", i-1)
		got := deliveries(t, out.RunDir, node)
		for _, p := range pub {
			if p.Result != rundir.ResultOK {
				t.Errorf("publish %d: %s %s", p.Seq, p.Result, p.Log)
			}
			if got[p.MsgID] != prev {
				t.Errorf("%s: message %s from %q, want it from %s", node, p.MsgID, got[p.MsgID], prev)
			}
		}
	}
	var sum rundir.LoadSummary
	if err := (&rundir.Dir{Path: out.RunDir}).ReadJSON(rundir.LoadFile, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Valid || sum.OK != count {
		t.Errorf("load.json: %+v", sum)
	}
}

// The analytic checks on real hosts over emulated links of one-way delay
// L: in a line of N every message's last delivery is N-1 hops from the
// publisher and about (N-1) x L after it (each hop adds L, plus a few ms of
// processing and emulation); in a complete graph no delivery is more than
// 2 hops away. Nothing is impaired but delay: MDR 100 %.
func TestGossipLineAndFullOverDelay(t *testing.T) {
	needRoot(t)
	exe := benchnetExe(t)
	const delay = 30 * time.Millisecond
	// perHop bounds the time a hop adds beyond L (router, TCP, emulator on
	// a shared 2-core machine); measured ~1 ms (a line of 8 at 50 ms:
	// last delivery mean 355.6 ms for 350).
	const perHop = 8 * time.Millisecond
	for _, c := range []struct {
		name, subnet, topology, source string
		n                              int
		hops                           func(last, chain rundir.Stats) bool
		lastMin, lastP50Max            time.Duration
	}{
		{"line", subnetGossipDelay, "line", "gossip0", 5,
			func(last, chain rundir.Stats) bool { return last.Min == 4 && last.Max == 4 && chain.Max == 4 },
			4 * delay, 4 * (delay + perHop)},
		{"full", subnetGossipFull, "full", "random", 6,
			func(last, chain rundir.Stats) bool { return last.Max <= 2 && chain.Max <= 2 },
			delay, 2 * (delay + perHop)},
	} {
		t.Run(c.name, func(t *testing.T) {
			const count = 20
			m := gossipNet(t, c.subnet, c.topology, fmt.Sprintf("delay = %q\n", delay.String()), c.n,
				fmt.Sprintf("rate = 10\ncount = %d\nsource = %q\nwarmup = \"2s\"\ncooldown = \"2s\"\n", count, c.source))
			var log strings.Builder
			out, err := Gossip(context.Background(), m, Options{Up: testnet.Options{Output: t.TempDir(), HostExecutable: exe}, Log: &log})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, log.String())
			}
			res, err := (&rundir.Dir{Path: out.RunDir}).ReadResults()
			if err != nil {
				t.Fatal(err)
			}
			g := res.Gossip
			t.Logf("%s of %d, L = %v: MDR %.4f, last delivery ms min %.1f p50 %.1f max %.1f, last-delivery hop p50 %.0f max %.0f, longest chain max %.0f",
				c.topology, c.n, delay, g.MDR, g.LastDelivery.Min, g.LastDelivery.P50, g.LastDelivery.Max, g.LastDeliveryHop.P50, g.LastDeliveryHop.Max, g.MaxHop.Max)
			if !res.Valid {
				t.Errorf("run not valid: %v", res.Invalid)
			}
			if g.Messages != count || g.MDR != 1 {
				t.Errorf("%d messages, MDR %v (missing %v): want %d and 1", g.Messages, g.MDR, g.Missing, count)
			}
			if !c.hops(g.LastDeliveryHop, g.MaxHop) {
				t.Errorf("hops: last delivery %+v, longest chain %+v", g.LastDeliveryHop, g.MaxHop)
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			if g.LastDelivery.Min < ms(c.lastMin) || g.LastDelivery.P50 > ms(c.lastP50Max) {
				t.Errorf("last delivery ms min %.1f p50 %.1f: want min >= %.0f (the links' delay) and p50 <= %.0f",
					g.LastDelivery.Min, g.LastDelivery.P50, ms(c.lastMin), ms(c.lastP50Max))
			}
		})
	}
}

// A host killed (SIGKILL, not asked to stop) in the middle of the
// publishing of a line: the run goes on to its analysis, the host is marked
// exited and its missing deliveries are attributed to its exit; the hosts
// behind it miss the later messages as never reached; the host before it
// misses nothing.
func TestGossipHostKilled(t *testing.T) {
	needRoot(t)
	exe := benchnetExe(t)
	const n, count = 5, 60
	m := gossipLine(t, subnetGossipKill, n, fmt.Sprintf("rate = 20\ncount = %d\nsource = \"gossip0\"\nwarmup = \"1s\"\ncooldown = \"1s\"\n", count))
	ctx := context.Background()
	tn, err := testnet.Up(ctx, m, testnet.Options{Output: t.TempDir(), HostExecutable: exe, ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer tn.Down(context.WithoutCancel(ctx))
	killed := make(chan error, 1)
	go func() {
		time.Sleep(2500 * time.Millisecond) // warm-up 1 s, then ~30 messages
		pid := tn.PIDs()["gossip2"]
		if pid <= 0 {
			killed <- fmt.Errorf("gossip2: no pid")
			return
		}
		killed <- syscall.Kill(pid, syscall.SIGKILL)
	}()
	var log strings.Builder
	if err := gossipUp(ctx, tn, Options{Log: &log, ScrapeInterval: time.Second}, nil); err != nil {
		t.Fatalf("run with a host killed: %v\n%s", err, log.String())
	}
	if err := <-killed; err != nil {
		t.Fatalf("kill gossip2: %v", err)
	}
	res, err := analysis.Run(tn.Dir)
	if err != nil {
		t.Fatalf("analysis: %v\n%s", err, log.String())
	}
	g := res.Gossip
	node := map[string]rundir.GossipNode{}
	for _, nr := range g.HostNodes {
		node[nr.Name] = nr
	}
	if nr := node["gossip1"]; nr.Delivered != count || nr.Exited {
		t.Errorf("gossip1, before the killed host: %+v, want %d deliveries", nr, count)
	}
	k := node["gossip2"]
	lost := k.Expected - k.Delivered
	if !k.Exited || lost == 0 || lost == count || k.Missing[analysis.ReasonHostExited] != lost {
		t.Errorf("gossip2 (killed): %+v: want exited, some but not all %d messages missing, all of them %s", k, count, analysis.ReasonHostExited)
	}
	if g.Missing[analysis.ReasonHostExited] != lost {
		t.Errorf("missing %v: want exactly gossip2's %d as %s", g.Missing, lost, analysis.ReasonHostExited)
	}
	for _, name := range []string{"gossip3", "gossip4"} {
		nr := node[name]
		if nr.Exited || nr.Delivered == 0 || nr.Delivered >= count || nr.Missing[analysis.ReasonNeverReached] != count-nr.Delivered {
			t.Errorf("%s (behind the killed host): %+v: want some but fewer than %d, the rest %s", name, nr, count, analysis.ReasonNeverReached)
		}
	}
	var sum rundir.LoadSummary
	if err := tn.Dir.ReadJSON(rundir.LoadFile, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.OK != count {
		t.Errorf("publisher gossip0 lives: want %d ok publishes, got %+v", count, sum)
	}
}
