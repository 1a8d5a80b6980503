package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// gossipHosts is the number of hosts and gossipMsgs the messages of the
// gossip runs on the runners that isolate each host's filesystem.
const gossipHosts, gossipMsgs = 5, 30

// gossipLineManifest is a line of gossipHosts hosts, gossip0 publishing
// gossipMsgs messages, with extra TOML appended (an [infra] table); zones
// (placement labels on swarm) go on the group when given.
func gossipLineManifest(t *testing.T, subnet string, zones []string, extra string) string {
	t.Helper()
	z := ""
	if len(zones) > 0 {
		z = "zones = [" + tomlStrings(zones) + "]\n"
	}
	m := fmt.Sprintf(`name = "gossip-runner"
seed = 7

[network]
subnet = %q
topology = "line"

[node.gossip]
kind = "gossipsub"
count = %d
%s
[gossipsub]
heartbeat = "200ms"

[publish]
rate = 20
count = %d
source = "gossip0"
warmup = "2s"
cooldown = "2s"
%s`, subnet, gossipHosts, z, gossipMsgs, extra)
	p := filepath.Join(t.TempDir(), "gossip-runner.toml")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tomlStrings is ss as the body of a TOML array of strings.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// checkGossipTraces: every host's trace reached the run directory, and
// every host past the publisher delivered every message once, from its
// predecessor on the line.
func checkGossipTraces(t *testing.T, dir string) {
	t.Helper()
	pub, _, err := rundir.PublishedCSV.ReadFile(filepath.Join(dir, rundir.PublishedCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != gossipMsgs {
		t.Fatalf("published.csv: %d rows, want %d", len(pub), gossipMsgs)
	}
	for i := 1; i < gossipHosts; i++ {
		node, prev := fmt.Sprintf("gossip%d", i), fmt.Sprintf("gossip%d", i-1)
		rows, _, err := rundir.GossipTraceCSV.ReadFile(filepath.Join(dir, rundir.GossipTraceDir, node+".csv"))
		if err != nil {
			t.Errorf("trace of %s: %v", node, err)
			continue
		}
		from := map[string]string{}
		for _, r := range rows {
			if r.Kind == rundir.GossipDeliver {
				from[r.MsgID] = r.Peer
			}
		}
		for _, p := range pub {
			if from[p.MsgID] != prev {
				t.Errorf("%s: message %s from %q, want it from %s", node, p.MsgID, from[p.MsgID], prev)
				break
			}
		}
	}
}

// TestDockerGossip: a line of gossipsub hosts on runner=docker delivers
// every message along the line, and every host's trace, written inside
// its container, is in the run directory's traces/ (infra.Process.Dirs);
// nothing labelled is left.
func TestDockerGossip(t *testing.T) {
	needDocker(t)
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	b, err := exec.Command(bin, "run", gossipLineManifest(t, "10.213.242.0/24", nil, ""), "--runner", "docker", "--output", out).CombinedOutput()
	if err != nil {
		t.Fatalf("benchnet run --runner docker: %v\n%s", err, b)
	}
	dir := onlyRunDirOf(t, out, "gossip-runner")
	checkGossipTraces(t, dir)
	if left := labelled(t, stateRunID(t, dir)); len(left) > 0 {
		t.Errorf("left after run: %v", left)
	}
}
