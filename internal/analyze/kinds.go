package analyze

import (
	"context"
	"fmt"
	"io"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Kind is a node kind's analysis: how a finished run directory of that
// kind becomes results.json, and the lines its run prints at the end. Each
// kind registers its own from its package's init (internal/kinds links
// every kind into a binary), so that the layers above (scenario, the
// analyze command) ask for a run's kind and name no kind package.
type Kind struct {
	// Analyze reads d, writes its derived files and results.json, and
	// returns the results.
	Analyze func(d *rundir.Dir) (*rundir.Results, error)
	// Summary is the few lines a run of the kind prints at its end.
	Summary func(r *rundir.Results) string
	// Outputs are the files Analyze writes besides results.json, for the
	// "wrote …" line.
	Outputs []string
	// Recover, when set, rebuilds from the nodes' stores what a run that
	// was killed before its own harvest lacks (CometBFT: the blocks, read
	// offline), saying why in reason; the analyze command calls it when
	// the run has no harvest.json. A kind whose analysis needs only the
	// harness's own files (gossip: the hosts' traces) sets none.
	Recover func(ctx context.Context, dir, reason string, log io.Writer) error
}

var kinds = registry.New[Kind]("analysis for node kind")

// Register makes kind's analysis available to Run; a kind registers once.
func Register(kind string, k Kind) { kinds.Register(kind, k) }

// Kinds are the node kinds with an analysis in this binary.
func Kinds() []string { return kinds.Names() }

// For is the analysis of node kind kind.
func For(kind string) (Kind, error) {
	k, err := kinds.Lookup(kind)
	if err != nil {
		return Kind{}, fmt.Errorf("%w; import internal/kinds", err)
	}
	return k, nil
}

// SummaryOf is the lines a run of kind prints at its end ("" for a kind
// without an analysis in this binary).
func SummaryOf(kind string, r *rundir.Results) string {
	k, err := For(kind)
	if err != nil || k.Summary == nil {
		return ""
	}
	return k.Summary(r)
}

// Run analyses the run directory d with its kind's analysis (plan.json's
// kind, plan.RunKind) and returns the results and the kind.
func Run(d *rundir.Dir) (*rundir.Results, Kind, error) {
	name, err := plan.RunKind(d.Path)
	if err != nil {
		return nil, Kind{}, err
	}
	k, err := For(name)
	if err != nil {
		return nil, Kind{}, err
	}
	res, err := k.Analyze(d)
	return res, k, err
}
