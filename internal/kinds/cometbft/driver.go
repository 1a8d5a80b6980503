package cometbft

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Driver is the CometBFT node kind: any pinned release, in-process kvstore
// or abci-cli's over a socket; ready at a block height.
type Driver struct {
	ReadyHeight int64
	// Executable is the benchnet binary that serves the accounts app
	// (default: os.Executable(); tests build one).
	Executable string

	// One RPC client per node for Ready and Height, which late starts and
	// the height poller call from several goroutines.
	mu      sync.Mutex
	clients map[string]*cometrpc.Client
}

var _ node.Chain = (*Driver)(nil)

func (d *Driver) client(n *plan.Node) *cometrpc.Client {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clients == nil {
		d.clients = map[string]*cometrpc.Client{}
	}
	// Keyed by URL as well: a node restarted on swarm may be published
	// on other ports, and a client of the old ones would never reach it.
	url := n.RPCURL()
	key := n.Name + " " + url
	c, ok := d.clients[key]
	if !ok {
		c = cometrpc.New(url)
		d.clients[key] = c
	}
	return c
}

// Height asks n's RPC for its latest height (node.Chain).
func (d *Driver) Height(ctx context.Context, n *plan.Node) (int64, bool, error) {
	st, err := d.client(n).Status(ctx)
	if err != nil {
		return 0, false, err
	}
	return st.Height, st.CatchingUp, nil
}

// Binaries builds (or finds in the cache) cometbft, and abci-cli for the
// releases of socket-app nodes.
func (d *Driver) Binaries(ctx context.Context, p *plan.Testnet, log io.Writer) ([]node.Binary, error) {
	var out []node.Binary
	have := func(rel release.Release, prog string) bool { return node.Find(out, rel, prog) != "" }
	for _, n := range p.Nodes {
		progs := []string{"cometbft"}
		if n.App == "kvstore-socket" {
			progs = append(progs, "abci-cli")
		}
		if n.App == AccountsApp {
			if !have(n.Release, AppProgram) {
				exe := d.Executable
				if exe == "" {
					var err error
					if exe, err = os.Executable(); err != nil {
						return nil, fmt.Errorf("accounts app: own executable: %w", err)
					}
				}
				out = append(out, node.Binary{Release: n.Release, Program: AppProgram, Path: exe})
			}
		}
		for _, prog := range progs {
			if have(n.Release, prog) {
				continue
			}
			path, err := binaries.Ensure(ctx, n.Release, prog, log)
			if err != nil {
				return nil, err
			}
			out = append(out, node.Binary{Release: n.Release, Program: prog, Path: path})
		}
	}
	return out, nil
}

// Homes runs `cometbft testnet` per release and patches every config.
func (d *Driver) Homes(ctx context.Context, p *plan.Testnet, bins []node.Binary, env node.Env) error {
	byRel := map[release.Release]string{}
	for _, b := range bins {
		if b.Program == "cometbft" {
			byRel[b.Release] = b.Path
		}
		if b.Program == AppProgram {
			if err := copyExecutable(b.Path, appBinPath(env.Dir.Path)); err != nil {
				return err
			}
		}
	}
	return GenerateHomes(ctx, p, byRel, env.Homes)
}

// Processes: the socket app first (the node connects to it), then the node.
func (d *Driver) Processes(n *plan.Node, bins []node.Binary, env node.Env) []infra.Process {
	home := env.Dir.Join(rundir.Homes, n.Name)
	var procs []infra.Process
	if HasAppProcess(n) {
		argv := AppArgv(node.Find(bins, n.Release, "abci-cli"), home)
		if n.App == AccountsApp {
			argv = AccountsAppArgv(appBinPath(env.Dir.Path), home, n)
		}
		procs = append(procs, infra.Process{
			Node: n.Name, Name: "app", Argv: argv, Dir: home, ChownDirs: []string{home},
			LogPath: env.Dir.Join(rundir.Logs, n.Name+"-app.log"), Unprivileged: env.Unprivileged,
		})
	}
	return append(procs, infra.Process{
		Node: n.Name, Name: "node", Argv: NodeArgv(node.Find(bins, n.Release, "cometbft"), home), Dir: home,
		LogPath: env.Dir.Join(rundir.Logs, n.Name+".log"), Unprivileged: env.Unprivileged, ChownDirs: []string{home},
	})
}

// Ready: the node's RPC answers at height >= ReadyHeight and the node is
// not block-syncing.
func (d *Driver) Ready(ctx context.Context, n *plan.Node) (bool, string) {
	st, err := d.client(n).Status(ctx)
	if err != nil {
		return false, "RPC not answering: " + err.Error()
	}
	if n.Role == "seed" {
		// A seed (seed_mode) hands out addresses and hangs up; its own
		// chain waits for its next crawl, 30 s after its start, and
		// nothing depends on it: it is ready once it answers. (Waiting
		// for its height cost every seeded testnet 30 s.)
		return true, fmt.Sprintf("seed, at height %d", st.Height)
	}
	if st.CatchingUp {
		// Still block-syncing: its RPC refuses broadcasts ("endpoint is
		// closed while node is catching up"), so a warm-up would fail.
		return false, fmt.Sprintf("at height %d, catching up (block sync)", st.Height)
	}
	return st.Height >= d.ReadyHeight, fmt.Sprintf("at height %d", st.Height)
}

// Reset runs the release's own `cometbft unsafe-reset-all` on n's home
// (blocks, state, WAL, address book gone; the validator's signing state back
// to height 0; keys, config and genesis kept), then removes the socket
// app's store (AppDataDir: kvstore's or the accounts app's), so the app
// too starts from genesis and replays the chain with the node. The
// releases' reset removes the whole data directory, the app's store with
// it, but that store is ours, so it is removed here by name.
func (d *Driver) Reset(ctx context.Context, n *plan.Node, bins []node.Binary, env node.Env) error {
	bin := node.Find(bins, n.Release, "cometbft")
	if bin == "" {
		return fmt.Errorf("reset: no cometbft binary of %s", n.Release)
	}
	home := filepath.Join(env.Homes, n.Name)
	if _, err := os.Stat(filepath.Join(home, "config", "genesis.json")); err != nil {
		// unsafe-reset-all would create a home where there was none.
		return fmt.Errorf("reset: not a generated home: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, "unsafe-reset-all", "--home", home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("reset: %s unsafe-reset-all: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	if HasAppProcess(n) {
		if err := os.RemoveAll(AppDataDir(home)); err != nil {
			return fmt.Errorf("reset: app store: %w", err)
		}
	}
	return nil
}

// Waiting implements node.Driver.
func (d *Driver) Waiting() string { return fmt.Sprintf("at height >= %d", d.ReadyHeight) }

var _ node.Driver = (*Driver)(nil)

// newDriver is the kind's node.Driver for a node.
func newDriver(c node.Config) node.Driver {
	return &Driver{ReadyHeight: c.ReadyHeight, Executable: c.Executable}
}
