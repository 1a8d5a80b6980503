package gossipsub

import (
	// The rest of the kind registers from its own packages: the trace
	// analysis, figures and metric tables, and the run report and
	// comparison view. Linking the driver links them.
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	_ "github.com/benchnet/benchnet/internal/kinds/gossipsub/gossipreport"
)
