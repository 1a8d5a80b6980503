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

func kindMetrics(kind string) (KindMetrics, bool) {
	if kind == "" {
		kind = "cometbft" // compare.json written before the kind was recorded
	}
	return kinds.Get(kind)
}

// MetricsOf is the judged metrics of a node kind's runs ("" is cometbft,
// compare.json written before the kind was recorded); ok is false for a
// kind with none. Readers of records (the report) take the metrics' names,
// units and directions from here.
func MetricsOf(kind string) ([]Metric, bool) {
	km, ok := kindMetrics(kind)
	return km.Judged, ok
}
