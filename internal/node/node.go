// Package node is the seam between the testnet and what its nodes run: a
// Driver per node kind (cometbft, gossipsub) tells the testnet which
// binaries to get, how to write the nodes' homes, which processes to start
// on each node's host and when a node is ready. The testnet, the runners
// and the collectors stay the same for every kind; the workload and the
// analysis are chosen by the plan's kind above it (scenario).
package node

import (
	"context"
	"io"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Driver is one node kind.
type Driver interface {
	// Binaries builds or finds every program the plan's nodes run.
	Binaries(ctx context.Context, p *plan.Testnet, log io.Writer) ([]Binary, error)
	// Homes writes every node's home (config, keys) under env.Homes.
	Homes(ctx context.Context, p *plan.Testnet, bins []Binary, env Env) error
	// Processes are node n's processes, started in this order.
	Processes(n *plan.Node, bins []Binary, env Env) []infra.Process
	// Ready probes node n: whether it is ready, and where it is for an
	// error message ("at height 1", "3 of 4 peers").
	Ready(ctx context.Context, n *plan.Node) (ready bool, status string)
	// Waiting says what Ready waits for ("at height >= 2"), for messages.
	Waiting() string
}

// Binary is one program of a release.
type Binary struct {
	Release plan.Release
	Program string // "cometbft", "abci-cli", "benchnet"
	Path    string
}

// Find returns the path of release's program in bins ("" when absent).
func Find(bins []Binary, rel plan.Release, program string) string {
	for _, b := range bins {
		if b.Release == rel && b.Program == program {
			return b.Path
		}
	}
	return ""
}

// Env is where a run's nodes live.
type Env struct {
	Dir   *rundir.Dir
	Homes string // one directory per node under it
	// Unprivileged: node processes run as nobody (their homes and any file
	// they write must be handed to that user).
	Unprivileged bool
}
