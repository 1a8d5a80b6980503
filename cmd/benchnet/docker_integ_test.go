package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/docker"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
	"github.com/benchnet/benchnet/internal/testnet"
)

// needDocker skips (fails under CI) without a Docker engine.
func needDocker(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t)
	if !docker.Available(t.Context()) {
		testenv.Skip(t, "no Docker engine answers `docker version` (install docker.io and start dockerd)")
	}
}

// labelled lists what of the run still exists, as the runners' own
// leftovers hooks report it (containers, services, networks and volumes
// carrying the run's label, on every engine they reach).
func labelled(t *testing.T, runID string) []string {
	t.Helper()
	left, err := testnet.Leftovers(t.Context(), runID, nil)
	if err != nil {
		t.Fatalf("leftovers: %v", err)
	}
	return left
}

func stateRunID(t *testing.T, dir string) string {
	t.Helper()
	var st struct {
		RunID  string `json:"run_id"`
		Runner string `json:"runner"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.State))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil || st.RunID == "" {
		t.Fatalf("state file has no run id (%v): %s", err, raw)
	}
	if st.Runner != docker.Kind {
		t.Fatalf("state file records runner %q, want %q", st.Runner, docker.Kind)
	}
	return st.RunID
}

// TestDockerRunQuickstart: the quickstart on runner=docker commits its load
// with the accounting identity holding, and leaves nothing labelled behind.
func TestDockerRunQuickstart(t *testing.T) {
	needDocker(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.241.0/24", "6s")
	b, err := exec.Command(bin, "run", m, "--runner", "docker", "--output", out).CombinedOutput()
	if err != nil {
		t.Fatalf("benchnet run --runner docker: %v\n%s", err, b)
	}
	// Within the machine: the capacity check let it start, and said so.
	if !strings.Contains(string(b), "capacity: 4 nodes, 6 links") {
		t.Errorf("no capacity estimate in the output:\n%s", b)
	}
	dir := onlyRunDir(t, out)
	checkAllCommitted(t, dir)
	if left := labelled(t, stateRunID(t, dir)); len(left) > 0 {
		t.Errorf("left after run: %v", left)
	}
}

// TestDockerKill9ThenDown: `benchnet up --runner docker` killed with -9
// once its containers run; `benchnet down` removes every container and the
// network, and unregisters the run.
func TestDockerKill9ThenDown(t *testing.T) {
	needDocker(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	out := testenv.OutputDir(t)
	m := quickstartVariant(t, "10.213.242.0/24", "6s")
	runDir := upThenKill9(t, bin, m, "docker", out)
	id := stateRunID(t, runDir)
	if left := labelled(t, id); len(left) < 5 {
		t.Fatalf("after kill -9 want 4 containers and a network still there, got %v: the test would prove nothing", left)
	}
	downLeavesNothing(t, bin, runDir, func() []string { return labelled(t, id) })
}
