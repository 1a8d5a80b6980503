// Package metrics is the CometBFT kind's metric tables: what a comparison
// judges and what a [thresholds] table may name. The kind's descriptor
// registers them (kind.Register); it is a leaf, so that the manifest's and
// the judge's tests get the tables without the driver (internal/kinds/kindtest).
package metrics

import (
	"github.com/benchnet/benchnet/internal/judge"
)

// Tables are the kind's metric tables, registered by its descriptor.
var Tables = judge.KindMetrics{Judged: Metrics, ThresholdOnly: thresholdOnly}

// Metrics are what a comparison of CometBFT runs judges (compare's
// verdicts, --fail-on, a QA's steady step), in the order tables list them.
var Metrics = []judge.Metric{
	{Key: "tps", Name: "committed TPS", Unit: "tx/s", Better: judge.HigherIsBetter},
	{Key: "latency_avg", Name: "latency avg", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "latency_p50", Name: "latency p50", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "latency_p95", Name: "latency p95", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "latency_p99", Name: "latency p99", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "latency_max", Name: "latency max", Unit: "ms", Better: judge.LowerIsBetter},
	{Key: "peak_mempool", Name: "peak mempool", Unit: "txs", Better: judge.LowerIsBetter},
	// inclusion: committed (accounts workload: included with code 0) / sent;
	// ooo_inclusion: of the txs an out-of-order workload sent out of order.
	{Key: "inclusion", Name: "inclusion", Unit: "%", Better: judge.HigherIsBetter},
	{Key: "ooo_inclusion", Name: "out-of-order inclusion", Unit: "%", Better: judge.HigherIsBetter},
	{Key: "blocks_per_min", Name: "blocks/min", Unit: "1/min", Better: judge.HigherIsBetter},
	{Key: "rss_peak", Name: "RSS peak", Unit: "MiB", Better: judge.LowerIsBetter},
	{Key: "cpu_per_tx", Name: "CPU per committed tx", Unit: "ms", Better: judge.LowerIsBetter},
	// p2p_bytes_per_tx: results.json p2p.bytes_per_committed_tx (every
	// node's p2p bytes sent over the load / committed txs; CometBFT v1's
	// headline was bandwidth).
	{Key: "p2p_bytes_per_tx", Name: "p2p bytes per committed tx", Unit: "B", Better: judge.LowerIsBetter},
}

// Threshold-only keys: outcomes of faults and shares of the accounting that
// a comparison does not judge but a user may want to gate a run on.
var thresholdOnly = []judge.Metric{
	{Key: "committed", Name: "committed share", Unit: "%", Better: judge.HigherIsBetter},
	{Key: "lost", Name: "lost txs", Unit: "txs", Better: judge.LowerIsBetter},
	{Key: "caught_up", Name: "every rotate cycle caught up", Unit: "bool", Better: judge.HigherIsBetter},
	{Key: "halted", Name: "chain halted past halt_limit", Unit: "bool", Better: judge.LowerIsBetter},
}
