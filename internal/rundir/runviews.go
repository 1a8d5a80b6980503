package rundir

// The run-level views of issue 23 in results.json: tm-bench's per-second
// statistics, the p2p traffic per committed tx (CometBFT v1's headline was
// bandwidth) and the time the mempools spent at their size limit. All are
// optional (omitted for gossip runs and runs written before them).

// PerSecond is tm-bench's summary: the run's block time span cut into
// seconds, each second's committed txs and blocks counted by block time,
// then avg / stddev / max over the seconds (empty seconds count as 0).
type PerSecond struct {
	Seconds      int       `json:"seconds"`
	Txs          RateStats `json:"txs_per_sec"`
	Blocks       RateStats `json:"blocks_per_sec"`
	BlocksPerMin float64   `json:"blocks_per_min"` // 60 / block_stats.avg_block_interval_sec
}

// RateStats is one per-second series' avg, population stddev and max.
type RateStats struct {
	Avg float64 `json:"avg"`
	Std float64 `json:"stddev"`
	Max float64 `json:"max"`
}

// P2PTraffic is what the nodes sent and received over p2p while the load's
// txs were committed (from the load's start to the last block holding one
// of its txs), summed over nodes, from each node's Prometheus counters.
type P2PTraffic struct {
	Metric        string  `json:"metric"` // the send counter read, without the namespace (p2p_message_send_bytes_total or p2p_peer_send_bytes_total)
	FromNs        int64   `json:"from_ns"`
	ToNs          int64   `json:"to_ns"`
	SentBytes     float64 `json:"sent_bytes"`
	ReceivedBytes float64 `json:"received_bytes"`
	// BytesPerTx is SentBytes per committed tx of the run.
	BytesPerTx float64 `json:"bytes_per_committed_tx"`
}

// MempoolCapacity is the share of the mempool poller's rounds during the
// load (mempool.csv) in which at least one full node or validator held
// `mempool.size` txs or more.
type MempoolCapacity struct {
	Limit  int     `json:"limit"`  // the smallest mempool.size of the polled nodes
	Source string  `json:"source"` // "config" (the manifest's override) or "default"
	Rounds int     `json:"rounds"`
	AtCap  int     `json:"rounds_at_capacity"`
	Share  float64 `json:"share_at_capacity"`
}

// BlockEntry is one block of results.json's block_stats, as the Initia E2E
// benchmark writes it: height, txs in the block (all of them, not only
// the run's) and header time (RFC 3339, UTC).
type BlockEntry struct {
	Height  int64  `json:"height"`
	TxCount int    `json:"tx_count"`
	Time    string `json:"time"`
}

// ProposalTiming is what CometBFT v1's validators measured of the proposals
// they received during the load (consensus_proposal_timestamp_difference:
// receive time minus the proposal's timestamp, labelled by PBTS's
// timeliness verdict), summed over nodes. Under PBTS an untimely proposal is
// prevoted nil; under BFT time the verdict is computed but not acted on.
// Quantiles interpolate the histogram's buckets (-1.5 s … 8 s), as
// Prometheus's histogram_quantile does.
type ProposalTiming struct {
	Nodes     int     `json:"nodes"`
	Proposals int     `json:"proposals"` // observations, over every node
	Untimely  int     `json:"untimely"`
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
}
