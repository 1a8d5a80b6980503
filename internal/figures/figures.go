// Package figures is what a finished run gives the experiments to judge:
// its values of every judged metric of its node kind, and the units inside
// it a bootstrap redraws. Each node kind registers how its run directories
// give them (a NodeMetrics) from its own package under internal/kinds
// (CometBFT's figures.go, gossipsub's analysis/figures.go). A comparison, a
// threshold or a QA takes the one of its runs' kind and names no metric
// itself.
package figures

import (
	"errors"
	"fmt"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Run is one finished run's values of every judged metric of its kind,
// read from its run directory alone, and the units inside the run (blocks,
// messages) for a bootstrap within it.
type Run struct {
	Dir    string
	Values map[string]float64 // metric key -> value; a metric without data is absent
	// Inner gives the run's units for metric key, the statistic recomputed
	// from a resample of them; ok is false for a metric without a per-unit
	// form (it is then judged over run values). Nil: none.
	Inner  func(key string) (u judge.Units, ok bool)
	Blocks []Block
	// LatencyBlock is "H" or "H+1", the results' headline latency.
	LatencyBlock string
	Results      *rundir.Results
}

// Block is one block of a chain run's range: its committed run txs, the
// interval to the next block, and those txs' latencies (sorted).
type Block struct {
	Height    int64
	Txs       int
	Sec       float64
	Latencies []float64
}

// ErrInvalidRun marks a run its own analysis found invalid (the publisher
// fell behind, the machine was saturated): it measured the machine, not
// the protocol, and is never judged as a result.
var ErrInvalidRun = errors.New("the run is marked invalid")

// NodeMetrics is what one node kind's runs expose to a comparison: the
// metrics judged, how a finished run directory gives their values (and the
// units inside a run the bootstrap redraws), and which manifest keys the
// kind's variants exist to change.
type NodeMetrics interface {
	// Metrics are the judged quantities, in the order tables list them.
	Metrics() []judge.Metric
	// ReadFigures reads one finished run directory. An error leaves the
	// run out of the verdicts (with a warning naming it).
	ReadFigures(dir string) (*Run, error)
	// Unit names the units inside one run that the two-stage bootstrap
	// redraws ("block", "message").
	Unit() string
	// Resampling says, for the rule text, what is resampled how.
	Resampling() string
	// VariantKey reports whether a dotted manifest path is one a variant
	// of this kind exists to change: `compare DIR…` refuses runs whose
	// manifests differ elsewhere.
	VariantKey(path string) bool
	// VariantKeys names those keys for a message.
	VariantKeys() string
}

var kinds = registry.New[NodeMetrics]("comparison metrics for node kind")

// Register adds a node kind's comparison metrics; a kind's package calls
// it from init.
func Register(kind string, nm NodeMetrics) { kinds.Register(kind, nm) }

// For is kind's comparison metrics; "" is cometbft (compare.json written
// before the kind was recorded).
func For(kind string) (NodeMetrics, error) {
	nm, err := kinds.Lookup(judge.NodeKind(kind))
	if err != nil {
		return nil, fmt.Errorf("%w; import internal/kinds", err)
	}
	return nm, nil
}

// Kinds are the registered kinds, sorted.
func Kinds() []string { return kinds.Names() }
