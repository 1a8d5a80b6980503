// Package metrics is the gossipsub kind's metric tables: what a comparison
// judges and what a [thresholds] table may name. The kind's descriptor
// registers them (kind.Register); it is a leaf, so that the manifest's and
// the judge's tests get the tables without the host (internal/kinds/kindtest).
package metrics

import (
	"github.com/benchnet/benchnet/internal/judge"
)

// Tables are the kind's metric tables, registered by its descriptor.
var Tables = judge.KindMetrics{Judged: Metrics, ThresholdOnly: thresholdOnly}

// Metrics are what a gossip comparison judges (the Whiteblock
// report's figures): each run's results.json gossip section gives the run
// value, its deliveries.csv the messages the bootstrap redraws.
var Metrics = []judge.Metric{
	{Key: "mdr", Name: "MDR", Unit: "%", Better: judge.HigherIsBetter},
	{Key: "dissemination_avg", Name: "dissemination mean", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "dissemination_p50", Name: "dissemination p50", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "dissemination_p95", Name: "dissemination p95", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "dissemination_p99", Name: "dissemination p99", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "dissemination_max", Name: "dissemination max", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "last_delivery_avg", Name: "time to last delivery mean", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "last_delivery_p99", Name: "time to last delivery p99", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "last_delivery_hop", Name: "last-delivery hop mean", Unit: "hops", Better: judge.LowerIsBetter},
	{Key: "max_hop", Name: "max hop mean (Whiteblock's)", Unit: "hops", Better: judge.LowerIsBetter},
	{Key: "duplicates", Name: "duplicates per delivery", Unit: "copies", Better: judge.LowerIsBetter},
	{Key: "host_cpu_avg", Name: "host CPU avg", Unit: "% of a core", Better: judge.LowerIsBetter},
	{Key: "host_cpu_max", Name: "host CPU max", Unit: "% of a core", Better: judge.LowerIsBetter},
	{Key: "host_rss_max", Name: "host RSS max", Unit: "MiB", Better: judge.LowerIsBetter},
}

// thresholdOnly: the keys a [thresholds] table may name besides Metrics.
var thresholdOnly = []judge.Metric{
	{Key: "halted", Name: "halted past halt_limit", Unit: "bool", Better: judge.LowerIsBetter},
}
