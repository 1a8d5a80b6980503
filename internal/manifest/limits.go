package manifest

import "time"

// Limits of the manifest, documented in docs/manifest.md with their reasons.
// They keep a typo (one zero too many) from turning into a plan that takes
// minutes to compute, a plan.json of hundreds of MiB, or a run that exhausts
// the machine long after `benchnet run` started.
const (
	// MaxNodes bounds the testnet: the CometBFT QA's largest run has 200
	// nodes, a full mesh of n nodes writes n² peer names into plan.json
	// (3000 nodes: 212 MiB, 6 s to plan), and each node is a process of
	// ~60 MB RSS with its own namespace on this one machine.
	MaxNodes = 256
	// MaxStartDelay bounds [node.<group>].start_delay.
	MaxStartDelay = time.Hour
	// MaxJitter bounds an absolute [network].jitter; MaxZoneDelay a one-way
	// delay of a zone CSV (the farthest real regions are ~150 ms apart).
	MaxJitter    = 10 * time.Second
	MaxZoneDelay = 10 * time.Second
	// MaxRate is tx/s per connection: one connection's pacer cannot send
	// faster (its measured ceiling is ~60k tx/s against an in-process sink).
	MaxRate = 100_000.0
	// MaxConnections bounds connections per target: each is a goroutine with
	// its own socket and, for http, up to 16 requests in flight.
	MaxConnections = 1000
	// MaxDuration bounds [load].duration (a soak of a day is the longest
	// run the QA method knows).
	MaxDuration = 24 * time.Hour
	// MaxTxs bounds the txs one run sends (count, or rate × connections ×
	// duration): every tx is a row of sent.csv and txs.csv, and the analysis
	// holds them in memory.
	MaxTxs = 10_000_000
	// MaxTxSize is CometBFT's default mempool.max_tx_bytes (1 MiB): a node
	// with default settings rejects anything larger.
	MaxTxSize = 1 << 20
	// MaxWait bounds [load].warmup and [load].grace.
	MaxWait = time.Hour
)
