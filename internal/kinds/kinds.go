// Package kinds links every node kind into a binary: import it for its
// side effect, and node.New finds each kind's driver by its manifest name,
// analyze.Run each kind's analysis and report.Render each kind's reports
// by the run's kind. The testnet, the scenarios, the analyze command and
// the reports import no kind, so that they stay the same for all.
package kinds

import (
	// Each registers its driver with node.Register.
	_ "github.com/benchnet/benchnet/internal/kinds/cometbft"
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub"

	// Each registers its analysis with analyze.Register (CometBFT's is
	// analyze's own).
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"

	// Each registers its run report and comparison view with
	// report.RegisterKind (CometBFT's are report's own).
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub/gossipreport"
)
