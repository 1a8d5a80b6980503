package scenario

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

const (
	subnetGossipLine = "10.213.240.0/24"
	subnetGossipKill = "10.213.241.0/24"
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
	text := fmt.Sprintf("name = \"gossip-test\"\nseed = 7\n[network]\nsubnet = %q\ntopology = \"line\"\n"+
		"[node.gossip]\nkind = \"gossipsub\"\ncount = %d\n[gossipsub]\nheartbeat = \"200ms\"\n[publish]\n%s", subnet, n, publish)
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

// A host killed in the middle of the publishing: the run goes on, the
// publisher records the failed requests, hosts behind it in the line miss
// the later messages, and every trace stays readable.
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
	go func() {
		time.Sleep(2500 * time.Millisecond) // warm-up 1 s, then ~30 messages
		if err := tn.Runner.Stop(ctx, "gossip2", "node"); err != nil {
			t.Errorf("stop gossip2: %v", err)
		}
	}()
	var log strings.Builder
	sum, err := Publish(ctx, tn.Dir, tn.Plan, &log)
	if err != nil {
		t.Fatalf("publish with a host killed: %v\n%s", err, log.String())
	}
	if sum.OK != count {
		t.Errorf("publisher gossip0 lives: want %d ok publishes, got %+v", count, sum)
	}
	if err := tn.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(deliveries(t, tn.Dir.Path, "gossip1")); got != count {
		t.Errorf("gossip1, before the killed host: %d deliveries, want %d", got, count)
	}
	for _, node := range []string{"gossip2", "gossip3", "gossip4"} {
		if got := len(deliveries(t, tn.Dir.Path, node)); got == 0 || got >= count {
			t.Errorf("%s (the killed host or behind it): %d deliveries, want some but fewer than %d", node, got, count)
		}
	}
}
