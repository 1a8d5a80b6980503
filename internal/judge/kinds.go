package judge

import "github.com/benchnet/benchnet/internal/registry"

// GossipMetrics are what a gossip comparison judges (the Whiteblock
// report's figures): each run's results.json gossip section gives the run
// value, its deliveries.csv the messages the bootstrap redraws.
var GossipMetrics = []Metric{
	{Key: "mdr", Name: "MDR", Unit: "%", Better: HigherIsBetter},
	{Key: "dissemination_avg", Name: "dissemination mean", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p50", Name: "dissemination p50", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p95", Name: "dissemination p95", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p99", Name: "dissemination p99", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_max", Name: "dissemination max", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_avg", Name: "time to last delivery mean", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_p99", Name: "time to last delivery p99", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_hop", Name: "last-delivery hop mean", Unit: "hops", Better: LowerIsBetter},
	{Key: "max_hop", Name: "max hop mean (Whiteblock's)", Unit: "hops", Better: LowerIsBetter},
	{Key: "duplicates", Name: "duplicates per delivery", Unit: "copies", Better: LowerIsBetter},
	{Key: "host_cpu_avg", Name: "host CPU avg", Unit: "% of a core", Better: LowerIsBetter},
	{Key: "host_cpu_max", Name: "host CPU max", Unit: "% of a core", Better: LowerIsBetter},
	{Key: "host_rss_max", Name: "host RSS max", Unit: "MiB", Better: LowerIsBetter},
}

// KindMetrics are a node kind's metrics: those its runs are judged on
// (compare's verdicts, --fail-on) and those only a [thresholds] key may
// name besides (outcomes, accounting shares).
type KindMetrics struct {
	Judged, ThresholdOnly []Metric
}

var kinds = registry.New[KindMetrics]("metric tables for node kind")

// The built-in kinds' tables are here; another kind registers its own from
// its package's init.
func init() {
	RegisterKind("cometbft", KindMetrics{Judged: Metrics, ThresholdOnly: thresholdExtras})
	RegisterKind("gossipsub", KindMetrics{Judged: GossipMetrics, ThresholdOnly: gossipThresholdExtras})
}

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
