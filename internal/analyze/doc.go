// Package analyze is the frame of a run's analysis: a finished run
// directory becomes results.json by the analysis its node kind registered
// (Register, Run; CometBFT's tx-chain analysis and gossipsub's trace
// analysis live under internal/kinds), and what every kind's analysis
// shares is here (results.json's types are rundir's): the statistics (Summarize,
// Percentile), the faults' effects (LoadFaults, ComputeFaults) and the
// link emulator's lateness check (CheckLinks). Every analysis is a pure
// function of the directory.
package analyze
