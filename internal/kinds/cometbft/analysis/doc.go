// Package analysis is CometBFT's analysis of a run, as a tx chain: the
// raw records of a run directory (sent.csv, blocks.csv, block_txs.csv,
// mempool.csv, metrics) become txs.csv and results.json: the accounting of
// every tx, latency, throughput, block statistics, the run views (per-second
// rates, p2p traffic, mempool capacity and reach, proposal timing) and, for
// our accounts app, its nonce checks. It is a pure function of the
// directory; the kind registers it (analyze.Register), and a kind that
// commits txs the same way (a CometBFT fork, another ABCI app) can too.
package analysis
