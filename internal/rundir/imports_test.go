package rundir_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// TestRundirNearLeaf: rundir is the run directory's codecs, read by every
// layer, so it reaches nothing of the project but judge (whose verdict
// types its records embed; judge is pure statistics: the standard library
// and registry) and promtext (the exposition format, standard library only,
// which counters.prom is written in). Durations are rundir's own, the plan's reader is plan's
// (issue 35, item 4).
func TestRundirNearLeaf(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "go tool not on PATH")
	}
	const mod = "github.com/benchnet/benchnet/"
	allowed := []string{mod + "internal/rundir", mod + "internal/judge", mod + "internal/registry", mod + "internal/promtext"}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, mod+"internal/rundir") {
		t.Fatalf("go list -deps . did not list rundir itself: %v", deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, mod) && !slices.Contains(allowed, d) {
			t.Errorf("rundir depends on %s (allowed: %v)", d, allowed)
		}
	}
}
