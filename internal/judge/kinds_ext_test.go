package judge_test

import (
	// The node kinds register their metric tables (judge.RegisterKind),
	// which the threshold and verdict tests judge with.
	_ "github.com/benchnet/benchnet/internal/kinds"
)
