// Package kindtest links the node kinds' names, manifest schemas and
// metric tables alone, for the tests of the leaf packages (manifest, plan,
// judge, the history view): what a group's kind, a kind's own tables and
// a [thresholds] key are checked against, without the drivers and reports
// (the fuzzers run ~2x faster without them). Import it for its side
// effect, never beside internal/kinds, which registers the kinds whole
// through kind.Register.
package kindtest

import (
	cometbft "github.com/benchnet/benchnet/internal/kinds/cometbft/metrics"
	gossipsub "github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
)

func init() {
	for _, k := range []struct {
		name   string
		schema manifest.Schema
		tables judge.KindMetrics
	}{
		{manifest.KindCometBFT, manifest.Schema{}, cometbft.Tables},
		{spec.Name, spec.Schema, gossipsub.Tables},
	} {
		manifest.RegisterKind(k.name, k.schema)
		judge.RegisterKind(k.name, k.tables)
	}
}
