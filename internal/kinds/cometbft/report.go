package cometbft

import (
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
)

// A CometBFT run is reported, and its runs compared, as a tx chain's.
func init() {
	report.RegisterKind(manifest.KindCometBFT, report.Kind{Render: report.RenderChain, Compare: report.ChainCompare})
}
