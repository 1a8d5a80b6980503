package report

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Kind is a node kind's own reports, registered from the kind's package
// (internal/kinds links every kind into a binary). The reports of a tx
// chain's runs (RenderChain, ChainCompare) are here for a chain kind to
// register; a kind with other measurements brings its own.
type Kind struct {
	// Render writes the report of one run of the kind into outDir (the
	// run directory when ""), report.md first; see Render.
	Render func(runDir, outDir string) ([]string, error)
	// Compare is the kind's part of a comparison's report.
	Compare func(*rundir.CompareIndex) CompareView
}

var kinds = registry.New[Kind]("report for node kind")

// RegisterKind makes kind's reports the ones Render and RenderCompare use
// for its runs; a kind's report package calls it from init.
func RegisterKind(kind string, k Kind) { kinds.Register(kind, k) }

// kindOf is kind's registered reports, if any.
func kindOf(kind string) (Kind, bool) { return kinds.Get(kind) }

// CompareView is the part of a comparison's report that depends on the
// runs' node kind.
type CompareView interface {
	// Add reads one done run.
	Add(r rundir.CompareRun, dir string) error
	// Variants are the blocks of the "Variants" section.
	Variants() []block
	// PlotsIntro says how the overlays use the runs.
	PlotsIntro() string
	Figures() []CompareFigure
	// RunHead and RunCells are the runs table's columns between status
	// and run directory.
	RunHead() []string
	RunCells(r rundir.CompareRun) []string
}

// CompareFigure is one plot of a comparison: Build draws it (PNG) or says
// why it has no data.
type CompareFigure struct {
	Name, Title, What string
	Build             func() ([]byte, string, error)
}

// compareView is kind's registered view of a comparison.
func compareView(kind string, idx *rundir.CompareIndex) (CompareView, error) {
	if k, ok := kindOf(kind); ok && k.Compare != nil {
		return k.Compare(idx), nil
	}
	return nil, fmt.Errorf("no comparison report for node kind %q in this binary (have %v; import internal/kinds)", kind, kinds.Names())
}

// ChainCompare is the comparison view of a tx chain's runs (latency,
// mempool, throughput): a chain kind (CometBFT) registers it as its
// Compare.
func ChainCompare(idx *rundir.CompareIndex) CompareView {
	return &chainView{idx: idx, runs: map[string][]*run{}}
}
