package kinds_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

const (
	mod   = "github.com/benchnet/benchnet/"
	kinds = mod + "internal/kinds"
)

// linkers may reach the kinds: the binary (cmd/benchnet links them all),
// the benchmark programs, and the kinds themselves.
var linkers = []string{mod + "cmd/", mod + "bench/", kinds}

// TestGenericPackagesReachNoKind is issue 24's check: every package outside
// internal/kinds (the testnet, scenarios, analysis, reports, experiments and
// everything below them) reaches a node kind only through a registry
// (node.New, analyze.Run, report.RegisterKind, figures.For, judge.MetricsOf),
// never by import, directly or through another package. So a new kind is
// a package under internal/kinds and one line in kinds.go.
func TestGenericPackagesReachNoKind(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "go tool not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, deps := f[0], f[1:]
		if isLinker(pkg) {
			continue
		}
		checked++
		for _, d := range deps {
			if d == kinds || strings.HasPrefix(d, kinds+"/") {
				t.Errorf("%s reaches the kind package %s: go through a registry, and link kinds from a binary or a _test.go file", strings.TrimPrefix(pkg, mod), strings.TrimPrefix(d, mod))
			}
		}
	}
	if checked < 20 {
		t.Fatalf("go list named %d packages outside the kinds, want the whole module", checked)
	}
}

func isLinker(pkg string) bool {
	for _, l := range linkers {
		if pkg == strings.TrimSuffix(l, "/") || strings.HasPrefix(pkg, l) || strings.HasPrefix(pkg, l+"/") {
			return true
		}
	}
	return false
}
