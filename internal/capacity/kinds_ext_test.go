package capacity_test

import (
	// The node kinds register their cost models (capacity.Register), which
	// the tests of Need, Check and LargeDefaults estimate with.
	_ "github.com/benchnet/benchnet/internal/kinds"
)
