package docker

import (
	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// The state file has the local runner's shape (run id, runner, harness,
// resources), so the registry of live runs, `status` and the collectors read
// node pids from it the same way; what it adds are the Docker objects.
const (
	kindNetwork   = "network"
	kindContainer = "container"
	kindProcess   = statefile.KindProcess // a container's main process, by host pid
)

// The state file is shared by every runner (see statefile).
type (
	resource  = statefile.Resource
	harness   = statefile.Harness
	stateFile = statefile.File
)

func newStateFile(path, runID string) *stateFile { return statefile.New(path, runID, Kind) }

func readStateFile(path string) (*stateFile, error) { return statefile.Read(path) }
