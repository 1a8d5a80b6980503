package judge

import "github.com/benchnet/benchnet/internal/registry"

// KindMetrics are a node kind's metrics: those its runs are judged on
// (compare's verdicts, --fail-on) and those only a [thresholds] key may
// name besides (outcomes, accounting shares).
type KindMetrics struct {
	Judged, ThresholdOnly []Metric
}

var kinds = registry.New[KindMetrics]("metric tables for node kind")

// RegisterKind makes kind's metrics known to MetricsOf, ThresholdMetrics
// and the manifest's [thresholds] check.
func RegisterKind(kind string, km KindMetrics) { kinds.Register(kind, km) }

// Kinds are the node kinds with metric tables in this binary.
func Kinds() []string { return kinds.Names() }

// DefaultKind is the node kind of a manifest group that names none and of
// a record written before kinds were recorded (plan.json, compare.json,
// a history row): every such run is a CometBFT run.
const DefaultKind = "cometbft"

// NodeKind is kind as every reader takes it: "" is DefaultKind. It is the
// one place that decides the empty kind.
func NodeKind(kind string) string {
	if kind == "" {
		return DefaultKind
	}
	return kind
}

func kindMetrics(kind string) (KindMetrics, bool) { return kinds.Get(NodeKind(kind)) }

// MetricsOf is the judged metrics of a node kind's runs ("" is cometbft,
// compare.json written before the kind was recorded); ok is false for a
// kind with none. Readers of records (the report) take the metrics' names,
// units and directions from here.
func MetricsOf(kind string) ([]Metric, bool) {
	km, ok := kindMetrics(kind)
	return km.Judged, ok
}
