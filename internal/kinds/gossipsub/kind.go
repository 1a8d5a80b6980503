package gossipsub

import (
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/gossipreport"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/kinds/kind"
)

// Our go-libp2p gossipsub host joins the binary in one call: its manifest
// schema (the publish workload, the [gossipsub] table), the driver, the
// cost model, the trace analysis, the judged figures per message, the
// run report and comparison view, and the metric tables.
func init() {
	kind.Register(kind.Kind{
		Name:     spec.Name,
		Manifest: spec.Schema,
		Driver:   newDriver,
		Capacity: costModel,
		Analysis: analysis.Kind,
		Figures:  analysis.Figures,
		Report:   gossipreport.Kind,
		Metrics:  metrics.Tables,
	})
}
