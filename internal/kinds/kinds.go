// Package kinds links every node kind into a binary: import it for its
// side effect (cmd/benchnet does; a test file does for the tests that
// start testnets or read runs through the registries). Each kind is one
// folder here and registers, from its own package's init, everything the
// frame asks of it by the run's kind (plan.json's): its driver and
// measurement (node.Register), cost model (capacity.Register), analysis
// (analyze.Register), run report and comparison view
// (report.RegisterKind), judged figures (figures.Register) and metric
// tables (judge.RegisterKind). No package outside internal/kinds imports
// one (imports_test.go): adding a kind is a folder and a line below.
package kinds

import (
	// CometBFT and Tendermint releases: driver, the tx window, cost model,
	// figures, metric tables, its tx-chain analysis and its reports.
	_ "github.com/benchnet/benchnet/internal/kinds/cometbft"

	// Our go-libp2p gossipsub host: driver and cost model; its trace
	// analysis, figures and metric tables; its run report and comparison.
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub"
)
