// Package analyze is the frame of a run's analysis: a finished run
// directory becomes results.json by the analysis its node kind registered
// (Register, Run; CometBFT's tx-chain analysis and gossipsub's trace
// analysis live under internal/kinds), and what every kind's analysis
// shares is here: results.json's types, the statistics (Summarize,
// Percentile), the faults' effects (LoadFaults, ComputeFaults) and the
// link emulator's lateness check (CheckLinks). Every analysis is a pure
// function of the directory.
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
