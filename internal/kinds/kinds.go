// Package kinds links every node kind into a binary: import it for its
// side effect (cmd/benchnet does; a test file does for the tests that
// start testnets or read runs through the registries). Each kind is one
// folder here and joins in one call from its root package's init,
// kind.Register (internal/kinds/kind), with everything the frame asks of it
// by the run's kind (plan.json's): its driver, cost model, analysis, judged
// figures, run report and comparison view, and metric tables. No package
// outside internal/kinds imports one (imports_test.go): adding a kind is a
// folder and a line below.
package kinds

import (
	// CometBFT and Tendermint releases (internal/kinds/cometbft/kind.go).
	_ "github.com/benchnet/benchnet/internal/kinds/cometbft"

	// Our go-libp2p gossipsub host (internal/kinds/gossipsub/kind.go).
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub"
)
