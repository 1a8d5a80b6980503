package docker

import (
	"testing"

	"github.com/benchnet/benchnet/internal/infra/infratest"
	"github.com/benchnet/benchnet/internal/testenv"
)

// The runner suite at the interface (issue 35, item 6), on this machine's
// Docker engine: the helper runs in a container FROM scratch.
func TestRunnerSuite(t *testing.T) {
	testenv.NeedRoot(t)
	if !Available(t.Context()) {
		testenv.Skip(t, "no Docker engine answers `docker version` (install docker.io and start dockerd)")
	}
	infratest.Run(t, Kind, "10.213.161.0/24")
}
