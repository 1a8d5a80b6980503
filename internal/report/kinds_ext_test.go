package report_test

import (
	// The node kinds register what this package's tests read through the
	// registries (metric tables, analyses, reports); the package itself
	// imports none.
	_ "github.com/benchnet/benchnet/internal/kinds"
)
