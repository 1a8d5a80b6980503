package local

import (
	"testing"

	"github.com/benchnet/benchnet/internal/infra/infratest"
)

// The runner suite at the interface (issue 35, item 6), on this machine.
func TestRunnerSuite(t *testing.T) {
	t.Parallel()
	infratest.Run(t, Kind, "10.213.160.0/24")
}
