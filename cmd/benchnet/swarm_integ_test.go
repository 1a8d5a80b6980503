package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// needSwarm skips (fails under CI) without a Docker engine, and makes the
// engine a single-node swarm for the test when it is not in one, leaving
// the swarm again afterwards (the engine as found).
func needSwarm(t *testing.T) {
	t.Helper()
	needDocker(t)
	out, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatalf("docker info: %v", err)
	}
	if state := strings.TrimSpace(string(out)); state == "active" {
		return
	} else if state != "inactive" {
		t.Fatalf("swarm state %q: want active or inactive", state)
	}
	if b, err := exec.Command("docker", "swarm", "init", "--advertise-addr", "127.0.0.1").CombinedOutput(); err != nil {
		t.Fatalf("docker swarm init: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		if b, err := exec.Command("docker", "swarm", "leave", "--force").CombinedOutput(); err != nil {
			t.Errorf("docker swarm leave: %v\n%s", err, b)
		}
	})
}

// swarmLabelled lists the services, containers, networks and volumes still
// carrying the run's label.
func swarmLabelled(t *testing.T, runID string) []string {
	t.Helper()
	left := labelled(t, runID)
	out, err := exec.Command("docker", "service", "ls", "--quiet", "--filter", "label="+dockercli.Label+"="+runID).Output()
	if err != nil {
		t.Fatalf("docker service ls: %v", err)
	}
	for _, id := range strings.Fields(string(out)) {
		left = append(left, "service "+id)
	}
	return left
}

func swarmState(t *testing.T, dir string) statefile.Doc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, rundir.State))
	if err != nil {
		t.Fatal(err)
	}
	var st statefile.Doc
	if err := json.Unmarshal(raw, &st); err != nil || st.RunID == "" {
		t.Fatalf("state file has no run id (%v): %s", err, raw)
	}
	if st.Runner != "swarm" {
		t.Fatalf("state file records runner %q, want swarm", st.Runner)
	}
	return st
}

// TestSwarmRunQuickstart: the quickstart on runner=swarm (a single-node
// swarm) commits its load with the accounting identity holding, reaching
// the nodes at the ports the runner published, and leaves no service,
// container, network or volume behind.
func TestSwarmRunQuickstart(t *testing.T) {
	needSwarm(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.244.0/24", "6s")
	b, err := exec.Command(bin, "run", m, "--runner", "swarm", "--output", out).CombinedOutput()
	if err != nil {
		t.Fatalf("benchnet run --runner swarm: %v\n%s", err, b)
	}
	dir := onlyRunDir(t, out)
	checkAllCommitted(t, dir)
	// The stack file a user can inspect or redeploy.
	stack, err := os.ReadFile(filepath.Join(dir, "stack.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"validator3":`, "mode: host", "endpoint_mode: dnsrr", "driver: overlay"} {
		if !bytes.Contains(stack, []byte(want)) {
			t.Errorf("stack.yml has no %q:\n%s", want, stack)
		}
	}
	if left := swarmLabelled(t, swarmState(t, dir).RunID); len(left) > 0 {
		t.Errorf("left after run: %v", left)
	}
}

// TestSwarmKill9ThenDown: `benchnet up --runner swarm` killed with -9 once
// its nodes run; state.json has every node's published endpoints, and
// `benchnet down` removes every service, container, network and volume.
func TestSwarmKill9ThenDown(t *testing.T) {
	needSwarm(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.245.0/24", "6s")
	runDir := upThenKill9(t, bin, m, "swarm", out)
	st := swarmState(t, runDir)
	for _, n := range []string{"validator0", "validator1", "validator2", "validator3"} {
		ep := st.Endpoints[n]
		if ep.P2P != n+":26656" || !strings.HasPrefix(ep.RPC, "127.0.0.1:") || !strings.HasPrefix(ep.Metrics, "127.0.0.1:") {
			t.Errorf("endpoints of %s in state.json: %+v, want its alias and published ports", n, ep)
		}
	}
	// 4 services, their 4 containers, the network, 4 home volumes.
	if left := swarmLabelled(t, st.RunID); len(left) < 13 {
		t.Fatalf("after kill -9 want services, containers, network and volumes still there, got %v: the test would prove nothing", left)
	}
	downLeavesNothing(t, bin, runDir, func() []string { return swarmLabelled(t, st.RunID) })
}
