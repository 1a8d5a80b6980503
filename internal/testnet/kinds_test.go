package testnet

import (
	// Every node kind's driver, for Up (the package itself imports none).
	_ "github.com/benchnet/benchnet/internal/kinds"
)
