package infra_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// runnerPkgs are the runner packages under internal/infra. Each must reach
// shared plumbing through infra, statefile, dockercli and proctable, never
// through a sibling runner (issue 22, issue 24).
var runnerPkgs = []string{"local", "docker", "swarm"}

const infraPrefix = "github.com/benchnet/benchnet/internal/infra/"

// siblingImports returns, for runner, the sibling runner packages named in
// deps (the output of go list -deps).
func siblingImports(runner string, deps []string) []string {
	var bad []string
	for _, d := range deps {
		for _, other := range runnerPkgs {
			if other == runner {
				continue
			}
			if d == infraPrefix+other || strings.HasPrefix(d, infraPrefix+other+"/") {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

func TestSiblingImportsDetects(t *testing.T) {
	cases := []struct {
		runner string
		deps   []string
		want   int
	}{
		{"swarm", []string{infraPrefix + "statefile", infraPrefix + "dockercli"}, 0},
		{"swarm", []string{infraPrefix + "docker"}, 1},
		{"docker", []string{infraPrefix + "local", infraPrefix + "swarm/swarmtest"}, 2},
		{"local", []string{infraPrefix + "local", infraPrefix + "localx"}, 0},
	}
	for _, c := range cases {
		if got := siblingImports(c.runner, c.deps); len(got) != c.want {
			t.Errorf("siblingImports(%s, %v) = %v, want %d", c.runner, c.deps, got, c.want)
		}
	}
}

func TestNoRunnerImportsSibling(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "go tool not on PATH")
	}
	for _, r := range runnerPkgs {
		t.Run(r, func(t *testing.T) {
			// Non-test deps of the runner and every package below it.
			out, err := exec.Command("go", "list", "-deps", "./"+r+"/...").Output()
			if err != nil {
				t.Fatalf("go list -deps ./%s/...: %v", r, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatalf("go list -deps ./%s/... listed nothing", r)
			}
			for _, d := range siblingImports(r, deps) {
				t.Errorf("runner %s depends on sibling runner package %s", r, d)
			}
		})
	}
}

// TestAskersImportNoRunner: the layers that used to name runners ask their
// capabilities records now (caps), so none of them depends on a runner
// package; the runners are built in by whoever composes the binary (testnet
// registers them, cmd/benchnet composes).
func TestAskersImportNoRunner(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "go tool not on PATH")
	}
	for _, pkg := range []string{"manifest", "capacity", "plan"} {
		out, err := exec.Command("go", "list", "-deps", "../"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ../%s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps ../%s listed nothing", pkg)
		}
		for _, d := range deps {
			for _, r := range runnerPkgs {
				if d == infraPrefix+r || strings.HasPrefix(d, infraPrefix+r+"/") {
					t.Errorf("%s depends on runner package %s", pkg, d)
				}
			}
		}
	}
}
