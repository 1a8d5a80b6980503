package report

import (
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// chainRun is a finished CometBFT run directory, the chain report's own
// fixture: the experiment fixtures here copy it into their cells and render
// it through the registry (kinds_ext_test.go links the kinds).
const chainRun = "../kinds/cometbft/chainreport/testdata/run1"

func copyDir(t *testing.T, src string) string { return testenv.CopyDir(t, src) }
