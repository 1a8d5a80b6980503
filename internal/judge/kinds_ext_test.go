package judge_test

import (
	// The node kinds' metric tables (judge.RegisterKind), which a
	// [thresholds] key is checked against; the light leaf packages, not
	// the kinds whole (the fuzzer runs ~2x faster without the drivers).
	_ "github.com/benchnet/benchnet/internal/kinds/cometbft/metrics"
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
)
