// Package analyze turns the raw records of a run directory (txs.csv,
// blocks.csv, metrics) into summaries: accounting, latency, throughput.
package analyze

// Results is results.json: the summary of one run. The first block of fields
// follows the Initia E2E benchmark's result file so their tools can read ours.
type Results struct {
	Config         map[string]any `json:"config"`
	TotalSubmitted int            `json:"total_submitted"`
	TotalIncluded  int            `json:"total_included"`
	DurationSec    float64        `json:"duration_sec"`
	TxPerSecond    float64        `json:"tx_per_second"`
	AvgLatencyMs   float64        `json:"avg_latency_ms"`
	P50LatencyMs   float64        `json:"p50_latency_ms"`
	P95LatencyMs   float64        `json:"p95_latency_ms"`
	P99LatencyMs   float64        `json:"p99_latency_ms"`
	MaxLatencyMs   float64        `json:"max_latency_ms"`
	PeakMempool    int            `json:"peak_mempool_size"`
	BlockStats     BlockStats     `json:"block_stats"`

	RunID        string     `json:"run_id"`
	Accounting   Accounting `json:"accounting"`
	Latency      Stats      `json:"latency_ms"`
	LatencyBlock string     `json:"latency_block"` // "H" or "H+1": whose header time ends a tx's latency
	// LatencyOther is the same distribution measured with the other block's time.
	LatencyOther Stats `json:"latency_ms_other_block"`
	// NegativeLatencies counts headline latencies below 0 (block time before
	// send time). With "H" that is expected: BFT time makes block H's time
	// about the commit time of H−1, before later txs of H were sent.
	NegativeLatencies int          `json:"negative_latencies"`
	Load              []ConnStats  `json:"load"`
	Valid             bool         `json:"valid"`
	Invalid           []string     `json:"invalid_reasons,omitempty"`
	Nodes             []NodeResult `json:"nodes"`
	// LatencyValid is false when the userspace link emulator missed its
	// lateness bound during the load (LatencyInvalid says by how much): the
	// latencies then include the emulator's own delay. Absent when no
	// userspace emulator ran. See linkem.go.
	LatencyValid   *bool           `json:"latency_valid,omitempty"`
	LatencyInvalid string          `json:"latency_invalid_reason,omitempty"`
	Linkem         *LinkemLateness `json:"linkem_lateness,omitempty"`
}

// Accounting: every sent tx ends in exactly one state.
// Sent == Committed + Rejected + Lost always holds.
type Accounting struct {
	Sent       int `json:"sent"`
	Committed  int `json:"committed"`
	Rejected   int `json:"rejected"`
	Lost       int `json:"lost"`
	Duplicates int `json:"duplicates"` // extra commits of an already committed tx
	// SendErrors are rows whose send failed (transport error): not in Sent.
	SendErrors int `json:"send_errors"`
	// SendErrorsCommitted are send errors whose tx reached a block anyway
	// (the write got through before the connection failed).
	SendErrorsCommitted int `json:"send_errors_committed"`
}

// Stats is a latency (or other) distribution in one unit.
type Stats struct {
	N   int     `json:"n"`
	Avg float64 `json:"avg"`
	Std float64 `json:"std"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// BlockStats summarises the blocks of the run's height range.
type BlockStats struct {
	FirstHeight  int64   `json:"first_height"`
	LastHeight   int64   `json:"last_height"`
	Blocks       int     `json:"blocks"`
	AvgTxs       float64 `json:"avg_txs_per_block"`
	MaxTxs       int     `json:"max_txs_per_block"`
	AvgBlockSec  float64 `json:"avg_block_interval_sec"`
	AvgSizeBytes float64 `json:"avg_block_size_bytes"`
}

// ConnStats certifies the load generator per connection: target vs achieved
// rate and how far actual sends lagged intended ones.
type ConnStats struct {
	Node       string  `json:"node"`
	Conn       int     `json:"conn"`
	Sent       int     `json:"sent"`
	TargetRate float64 `json:"target_rate"`
	Achieved   float64 `json:"achieved_rate"`
	LagP99Ms   float64 `json:"lag_p99_ms"`
	LagMaxMs   float64 `json:"lag_max_ms"`
	Errors     int     `json:"errors"`
}

// NodeResult is what happened to one node during the run.
type NodeResult struct {
	Name        string `json:"name"`
	Sent        int    `json:"sent"`
	PeakMempool int    `json:"peak_mempool"`
	Exited      bool   `json:"exited"` // the node died during the run
	Detail      string `json:"detail,omitempty"`
}
