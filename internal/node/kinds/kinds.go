// Package kinds links every node kind into a binary: import it for its
// side effect, and node.New finds each kind's driver by its manifest name.
// The testnet itself imports no kind, so that it stays the same for all.
package kinds

import (
	// Each registers its driver with node.Register.
	_ "github.com/benchnet/benchnet/internal/node/cometbft"
	_ "github.com/benchnet/benchnet/internal/node/gossipsub"
)
