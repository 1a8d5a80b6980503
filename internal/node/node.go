// Package node is the seam between the testnet and what its nodes run: a
// Driver per node kind (cometbft, gossipsub) tells the testnet which
// binaries to get, how to write the nodes' homes, which processes to start
// on each node's host and when a node is ready. The testnet, the runners
// and the collectors stay the same for every kind; the workload follows
// the capabilities a driver implements (TxChain, Publisher), and the
// analysis and reports are what the kind registered (docs/kinds.md).
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/registry"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Driver is one node kind.
type Driver interface {
	// Binaries builds or finds every program the plan's nodes run.
	Binaries(ctx context.Context, p *plan.Testnet, log io.Writer) ([]Binary, error)
	// Homes writes every node's home (config, keys) under env.Homes.
	Homes(ctx context.Context, p *plan.Testnet, bins []Binary, env Env) error
	// Processes are node n's processes, started in this order and
	// stopped, killed and paused in the reverse one. The process named
	// "node" is the node itself (its pid is the node's); the others serve
	// it (CometBFT's socket app). Processes only describes them: the
	// testnet also asks it for the names and logs of a node's processes.
	Processes(n *plan.Node, bins []Binary, env Env) []infra.Process
	// Reset returns stopped node n's home to its state at genesis (keys,
	// config and genesis kept; whatever the node and its processes stored
	// while running gone), so that it next starts as a new node would. A
	// kind that cannot returns an error wrapping ErrNotSupported.
	Reset(ctx context.Context, n *plan.Node, bins []Binary, env Env) error
	// Ready probes node n: whether it is ready, and where it is for an
	// error message ("at height 1", "3 of 4 peers").
	Ready(ctx context.Context, n *plan.Node) (ready bool, status string)
	// Waiting says what Ready waits for ("at height >= 2"), for messages.
	Waiting() string
}

// Chain is implemented by the drivers of kinds whose nodes keep a chain
// (CometBFT): the fault runner polls their heights (heights.csv, the halt
// limit, a rotating node's catch-up, "back at tip"). A kind without one
// (gossipsub) runs its faults without that poller.
type Chain interface {
	// Height asks node n for its latest height and whether it is still
	// catching up (block sync).
	Height(ctx context.Context, n *plan.Node) (height int64, catchingUp bool, err error)
}

// Publisher is implemented by the drivers of kinds whose nodes publish
// messages at the harness's request (gossipsub): the publish workload goes
// through it, so that the workload does not know the kind's control API.
type Publisher interface {
	// Publish asks node n to publish one message of size bytes, id being
	// the message's identity in the traces. It is called concurrently.
	Publish(ctx context.Context, n *plan.Node, id string, size int) error
}

// Settler is implemented by the drivers of kinds whose nodes still hold
// the last load after it ends (a chain's mempools): an experiment that
// measures several cells on one testnet waits for Settle between them. A
// kind without one needs no wait.
type Settler interface {
	// Settle waits, at most limit, until p's nodes hold nothing of the
	// last load and have moved on from it, and returns how long it waited.
	Settle(ctx context.Context, p *plan.Testnet, limit time.Duration) (time.Duration, error)
}

// TxChain is implemented by the drivers of kinds whose load is txs that a
// chain commits into blocks (CometBFT). A tx run goes through it where the
// chain decides: which nodes take the load, the warm-up (submitting its
// txs and waiting for them), the watch during the load (mempools, the
// progress line), the drain and the harvest of the window's blocks. The
// load itself (what is sent, when, over which connections) and the frame
// of the run are the harness's.
type TxChain interface {
	// LoadNodes are the nodes a tx load of workload (manifest.Load's
	// Workload) goes to, in p's order, running or not.
	LoadNodes(p *plan.Testnet, workload string) []*plan.Node
	// WarmUp submits txs (the harness's warm-up txs, each to its node,
	// which must accept it) and waits until every node of nodes that keeps
	// the chain has committed them, at most limit; a kind may stretch the
	// limit on a slow chain and says so in log. limit 0 skips the warm-up.
	WarmUp(ctx context.Context, p *plan.Testnet, nodes []string, txs []Tx, limit time.Duration, log io.Writer) error
	// Open begins the measured window: what the chain commits from now on
	// belongs to it. running names the nodes running at any moment.
	Open(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, running func(string) bool) (TxWindow, error)
}

// Tx is one tx the harness made for node Node (a warm-up tx).
type Tx struct {
	Node string
	Data []byte
}

// TxWindow is one measured window of a tx run, from Open to Close.
type TxWindow interface {
	// Progress is the window's part of the load's progress line
	// ("height 12  mempool peak 3") and the txs committed since the last
	// call.
	Progress(ctx context.Context) (committed int, status string)
	// Drain polls the mempools of nodes until every one is empty in one
	// round or grace passes; it returns early, not failing, when ctx ends.
	Drain(ctx context.Context, nodes []string, grace time.Duration) Drained
	// Harvest writes the window's blocks into dir (blocks.csv and the
	// rest), with how the drain ended.
	Harvest(ctx context.Context, dir *rundir.Dir, drain *rundir.Drain) error
	// Close stops what the window watches with.
	Close()
}

// Drained is how a window's drain ended.
type Drained interface {
	String() string
	// Record is the drain as the run directory records it; see
	// rundir.Drain.
	Record(grace, bound time.Duration, interrupted bool) *rundir.Drain
}

// Statuser is implemented by the drivers whose running nodes can say how
// they are doing, for `benchnet status`: the kind names its columns, and
// Status gives node n's values in that order ("-" for one it cannot get).
type Statuser interface {
	StatusColumns() []string
	Status(ctx context.Context, n *plan.Node) ([]string, error)
}

// Describer is implemented by the drivers that can say, before anything
// starts, what p's nodes will run: one line each (`benchnet plan`).
type Describer interface {
	Describe(p *plan.Testnet) []string
}

// ErrNotSupported is wrapped by a driver's answer to what its kind cannot do.
var ErrNotSupported = errors.New("not supported")

// Config is what a kind's constructor gets from the testnet's options.
type Config struct {
	// ReadyHeight is the height a CometBFT node is ready at.
	ReadyHeight int64
	// Executable is the benchnet binary that serves what a kind runs of
	// benchnet's own (gossipsub hosts, the accounts app); "" is this
	// process's own executable.
	Executable string
}

var drivers = registry.New[func(Config) Driver]("driver for node kind")

// Register makes a node kind's driver available to New under its manifest
// name; a driver package calls it from init. Importing
// internal/kinds links in every kind.
func Register(kind string, newDriver func(Config) Driver) { drivers.Register(kind, newDriver) }

// New is a driver of the node kind the manifest names.
func New(kind string, c Config) (Driver, error) {
	newDriver, err := drivers.Lookup(kind)
	if err != nil {
		return nil, fmt.Errorf("%w; import internal/kinds", err)
	}
	return newDriver(c), nil
}

// Kinds are the registered kinds' names, sorted.
func Kinds() []string { return drivers.Names() }

// ProcessNames are the names of node n's processes in the order they are
// stopped: the node first, then what serves it (the reverse of their start
// order).
func ProcessNames(d Driver, n *plan.Node, bins []Binary, env Env) []string {
	var out []string
	for _, p := range slices.Backward(d.Processes(n, bins, env)) {
		out = append(out, p.Name)
	}
	return out
}

// Binary is one program of a release.
type Binary struct {
	Release release.Release
	Program string // "cometbft", "abci-cli", "benchnet"
	Path    string
}

// Find returns the path of release's program in bins ("" when absent).
func Find(bins []Binary, rel release.Release, program string) string {
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
