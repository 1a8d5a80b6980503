package experiment

import (
	// Every node kind, for the tests that start testnets and analyse runs
	// (the package itself imports none: a binary links them, see cmd/benchnet).
	_ "github.com/benchnet/benchnet/internal/kinds"
)
