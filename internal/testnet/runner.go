package testnet

import (
	"os"
	"strings"

	// Runners register themselves by name.
	_ "github.com/benchnet/benchnet/internal/infra/swarm"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/manifest"
)

// newRunner builds the runner the manifest's [infra] names (the flag
// --runner was copied into it and validated with it).
func newRunner(m *manifest.Manifest, runID, statePath string, opts Options) (infra.Runner, error) {
	c := infra.Config{RunID: runID, StatePath: statePath, Harness: opts.Harness, CPUs: m.Infra.CPUs, Engines: m.Infra.Engines,
		Executable: hostExecutable(opts.HostExecutable)}
	if m.Infra.Memory != "" {
		b, err := manifest.ParseMemory(m.Infra.Memory)
		if err != nil {
			return nil, manifest.Errors{m.Errorf("infra.memory", "%v", err)}
		}
		c.MemoryBytes = b
	}
	return infra.New(m.Infra.Runner, c)
}

// hostExecutable is the benchnet binary a runner may run beside the nodes:
// the one given, else this process's own unless it is a Go test binary
// (pkg.test), which would run its tests given benchnet's arguments; then
// none, and such runners go without what needs it.
func hostExecutable(given string) string {
	if given != "" {
		return given
	}
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") {
		return ""
	}
	return exe
}
