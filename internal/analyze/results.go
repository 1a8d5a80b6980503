// Package analyze turns the raw records of a run directory (sent.csv,
// blocks.csv, block_txs.csv, metrics) into txs.csv and results.json:
// accounting, latency, throughput. It is a pure function of the directory.
package analyze

import "github.com/benchnet/benchnet/internal/rundir"

// The result types are the run directory's (results.json); these names are
// kept for the packages that print them.
type (
	Results    = rundir.Results
	Accounting = rundir.Accounting
	Stats      = rundir.Stats
	BlockStats = rundir.BlockStats
	ConnStats  = rundir.ConnStats
	NodeResult = rundir.NodeResult
	Drain      = rundir.Drain
	Recovery   = rundir.Recovery
)

// End states of txs.csv's state column.
const (
	StateCommitted = rundir.StateCommitted
	StateRejected  = rundir.StateRejected
	StateLost      = rundir.StateLost
	StatePending   = rundir.StatePending
	StateSendError = rundir.StateSendError
)
