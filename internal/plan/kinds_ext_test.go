package plan_test

import (
	// The node kinds' names and metric tables (a group's kind and a
	// [thresholds] key are checked against them); the leaf tables, not
	// the kinds whole (the fuzzer runs ~2x faster without the drivers).
	_ "github.com/benchnet/benchnet/internal/kinds/kindtest"
)
