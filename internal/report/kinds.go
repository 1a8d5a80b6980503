package report

import (
	"fmt"

	"gonum.org/v1/plot"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Kind is a node kind's own reports, registered from the kind's package
// (internal/kinds links every kind into a binary): the report of one run,
// its part of a comparison, and the figures of one run that an
// experiment's report shows side by side (the QA's panels).
type Kind struct {
	// Render writes the report of one run of the kind into outDir (the
	// run directory when ""), report.md first; see Render.
	Render func(runDir, outDir string) ([]string, error)
	// Zoomed, when set, renders the run's report into outDir with its time
	// plots zoomed (benchnet report --xrange/--yrange); see RenderZoomed.
	Zoomed func(runDir, outDir string, z Zoom) ([]string, error)
	// Compare is the kind's part of a comparison's report.
	Compare func(*rundir.CompareIndex) CompareView
	// View loads one run for the figures an experiment's report shows of
	// it (nil: the kind offers none).
	View func(runDir string) (RunView, error)
	// SideBySide names the figures of View the QA report shows baseline |
	// candidate | candidate with latency emulation, in order.
	SideBySide []string
	// SoakPlots are the plots of the run report a soak report shows after
	// its fit, in order.
	SoakPlots []PlotRef
}

// PlotRef names one plot of a run report: its file under plots/ (without
// .png) and its title.
type PlotRef struct{ File, Title string }

// RunView is one loaded run of a kind, for the reports above one run.
type RunView interface {
	// Figure draws the run's figure name (one of the kind's SideBySide,
	// or FigureHeights) with its title; p is nil when the run has no data
	// for it, ok false when the kind has no such figure.
	Figure(name string) (p *plot.Plot, title string, ok bool)
}

// FigureHeights is the figure of every node's height over time that a
// chain kind's RunView draws for a run with faults or rotating nodes (the
// QA's rotating step).
const FigureHeights = "heights"

var kinds = registry.New[Kind]("report for node kind")

// RegisterKind makes kind's reports the ones Render and RenderCompare use
// for its runs; a kind's report package calls it from init.
func RegisterKind(kind string, k Kind) { kinds.Register(kind, k) }

// Kinds are the node kinds with a run report in this binary.
func Kinds() []string { return kinds.Names() }

// kindOf is kind's registered reports, if any.
func kindOf(kind string) (Kind, bool) { return kinds.Get(kind) }

// kindOfRun is the registered reports of runDir's kind (plan.json's), the
// zero Kind when its kind registered none, and the kind's name.
func kindOfRun(runDir string) (Kind, string, error) {
	kind, err := plan.RunKind(runDir)
	if err != nil {
		return Kind{}, "", err
	}
	k, _ := kindOf(kind)
	return k, kind, nil
}

// CompareView is the part of a comparison's report that depends on the
// runs' node kind.
type CompareView interface {
	// Add reads one done run.
	Add(r rundir.CompareRun, dir string) error
	// Variants are the blocks of the "Variants" section.
	Variants() []page.Block
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

// runView loads runDir with its kind's registered view.
func runView(runDir string) (RunView, Kind, error) {
	k, kind, err := kindOfRun(runDir)
	if err != nil {
		return nil, Kind{}, err
	}
	if k.View == nil {
		return nil, Kind{}, fmt.Errorf("no run view for node kind %q in this binary (have %v; import internal/kinds)", kind, kinds.Names())
	}
	v, err := k.View(runDir)
	return v, k, err
}
