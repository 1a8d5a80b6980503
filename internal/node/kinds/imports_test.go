package kinds_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/benchnet/benchnet/internal/"

// kindPkgs hold one node kind's knowledge: its driver, its analysis, its
// reports, the CometBFT RPC client and block harvest.
var kindPkgs = []string{"node/cometbft", "node/gossipsub", "analyze/gossip", "report/gossipreport", "cometrpc", "harvest"}

// genericPkgs are the frame every kind runs through (issue 24): they reach
// a kind through a registry (node.New, analyze.Run, report.RegisterKind),
// never by import.
// debts are the imports still to move behind one; a debt paid fails the
// test until it is struck from the list, so the list only shrinks.
var genericPkgs = map[string][]string{
	"testnet":     nil,
	"analyze":     nil,
	"collect":     nil,
	"judge":       nil,
	"rundir":      nil,
	"scenario":    nil,
	"report":      nil,
	"report/page": nil,
	"experiment":  nil,
}

func TestGenericPackagesImportNoKind(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	for pkg, debts := range genericPkgs {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "../../"+pkg).Output()
			if err != nil {
				t.Fatalf("go list %s: %v", pkg, err)
			}
			imports := strings.Fields(string(out))
			if len(imports) == 0 {
				t.Fatalf("go list %s listed no imports", pkg)
			}
			for _, k := range kindPkgs {
				has := slices.Contains(imports, mod+k)
				owed := slices.Contains(debts, k)
				switch {
				case has && !owed:
					t.Errorf("%s imports the kind package %s: reach it through a registry", pkg, k)
				case !has && owed:
					t.Errorf("%s no longer imports %s: strike the debt from genericPkgs", pkg, k)
				}
			}
		})
	}
}
