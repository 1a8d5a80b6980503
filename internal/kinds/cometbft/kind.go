package cometbft

import (
	"github.com/benchnet/benchnet/internal/kinds/cometbft/chainreport"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/metrics"
	"github.com/benchnet/benchnet/internal/kinds/kind"
	"github.com/benchnet/benchnet/internal/manifest"
)

// CometBFT and Tendermint releases join the binary in one call: the
// driver, the cost model, the tx-chain analysis, the judged figures per
// block, the run report and comparison view, and the metric tables.
func init() {
	kind.Register(kind.Kind{
		Name:     manifest.KindCometBFT,
		Driver:   newDriver,
		Capacity: costModel,
		Analysis: chainAnalysis,
		Figures:  chainMetrics{},
		Report:   chainreport.Kind,
		Metrics:  metrics.Tables,
	})
}
