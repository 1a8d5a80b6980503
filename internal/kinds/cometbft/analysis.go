package cometbft

import (
	"context"
	"io"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/harvest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A CometBFT run is analysed as a tx chain: the accounting of every sent
// tx against the harvested blocks, latencies, block statistics
// (internal/kinds/cometbft/analysis), and it prints the chain summary at its end. A run
// killed before its harvest is recovered from the nodes' block stores.
var chainAnalysis = analyze.Kind{
	Analyze: func(d *rundir.Dir) (*rundir.Results, error) { return analysis.Analyze(d.Path) },
	Summary: analysis.Summary,
	Outputs: []string{rundir.TxsCSV.Name},
	Recover: func(ctx context.Context, dir, reason string, log io.Writer) error {
		_, err := harvest.Offline(ctx, dir, reason, log)
		return err
	},
}
