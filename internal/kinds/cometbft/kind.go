package cometbft

import (
	// The run report, its comparison view and the QA's panels register
	// from their own package (chainreport's init); linking the driver
	// links them.
	_ "github.com/benchnet/benchnet/internal/kinds/cometbft/chainreport"
)
