package swarm

import (
	"os/exec"
	"testing"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/infratest"
	"github.com/benchnet/benchnet/internal/testenv"
)

// The runner suite at the interface (issue 35, item 6), on a one-engine
// swarm of this machine's Docker engine (swarm-1): made for the test when
// the engine is in none, and left again afterwards.
func TestRunnerSuite(t *testing.T) {
	testenv.NeedRoot(t)
	ctx := t.Context()
	if !dockercli.Default.Available(ctx) {
		testenv.Skip(t, "no Docker engine answers `docker version` (install docker.io and start dockerd)")
	}
	if !dockercli.Default.SwarmActive(ctx) {
		if b, err := exec.Command("docker", "swarm", "init", "--advertise-addr", "127.0.0.1").CombinedOutput(); err != nil {
			t.Fatalf("docker swarm init: %v\n%s", err, b)
		}
		t.Cleanup(func() { _ = exec.Command("docker", "swarm", "leave", "--force").Run() })
	}
	infratest.Run(t, Kind, "10.213.163.0/24")
}
