package cometbft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/harvest"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

var _ node.TxChain = (*Driver)(nil)

// mempoolInterval is how often the window polls every mempool
// (mempool.csv; the drain has its own interval).
const mempoolInterval = 500 * time.Millisecond

// LoadNodes are the validators for the kv load, and the validators and
// full nodes (every node that is not a seed) for the accounts workload.
func (d *Driver) LoadNodes(p *plan.Testnet, workload string) []*plan.Node {
	if workload == manifest.WorkloadAccounts {
		return slices.DeleteFunc(slices.Clone(p.Nodes), func(n *plan.Node) bool { return n.Role == "seed" })
	}
	return p.Validators()
}

// WarmUp submits the harness's warm-up txs (broadcast_tx_sync, so a node
// that rejects one says so at once) and waits until every node has moved
// two blocks past the top height at the send with an empty mempool: then
// each warm-up tx is committed on every node. Seeds are left out: their
// height waits for their next crawl and no tx goes through them.
func (d *Driver) WarmUp(ctx context.Context, p *plan.Testnet, names []string, txs []node.Tx, limit time.Duration, log io.Writer) error {
	if limit <= 0 {
		return nil
	}
	start := time.Now()
	// The txs are committed everywhere two blocks past top: on a slow chain
	// (a candidate that regressed to 3 s blocks) a fixed limit would fail
	// the harness, not the build. The limit stretches to 4 block intervals,
	// as the chain's recent blocks and the heights seen here show them;
	// ctx's outer bound is 10 times the limit.
	ctx, cancel := context.WithTimeout(ctx, 10*limit)
	defer cancel()
	if err := submitWarmup(ctx, p, txs); err != nil {
		return err
	}
	sent := len(txs)
	nodes := chainNodes(p, names)
	var top int64
	clients := make([]*cometrpc.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = cometrpc.New(n.RPCURL())
		st, err := clients[i].Status(ctx)
		if err != nil {
			return fmt.Errorf("warm-up: %s: %w", n.Name, err)
		}
		top = max(top, st.Height)
	}
	var seen []cometrpc.BlockMeta // heights as first seen on the first node, and when
	if metas, err := clients[0].BlockMetas(ctx, max(2, top-4), top); err == nil {
		seen = metas
	}
	wait, told := limit, false
	for {
		ready := true
		for i, c := range clients {
			st, err := c.Status(ctx)
			if err == nil && i == 0 && (len(seen) == 0 || st.Height > seen[len(seen)-1].Height) {
				seen = append(seen, cometrpc.BlockMeta{Height: st.Height, Time: time.Now()})
			}
			if err != nil || st.Height < top+2 {
				ready = false
				break
			}
			if size, err := c.MempoolSize(ctx); err != nil || size > 0 {
				ready = false
				break
			}
		}
		if ready {
			fmt.Fprintf(log, "warm-up: %d tx(s) committed on all %d nodes in %s\n", sent, len(nodes), time.Since(start).Round(time.Millisecond))
			return nil
		}
		if w := warmupLimit(limit, seen); w > wait {
			wait = w
			if !told {
				fmt.Fprintf(log, "warm-up: blocks take %s here: waiting up to %s (load.warmup %s)\n",
					blockInterval(seen).Round(time.Millisecond), min(wait, 10*limit).Round(time.Second), limit)
				told = true
			}
		}
		if time.Since(start) >= wait {
			return fmt.Errorf("warm-up: txs not committed on every node within %s (load.warmup)", wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("warm-up: txs not committed on every node within %s (load.warmup)", 10*limit)
			}
			return context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// submitWarmup sends every warm-up tx to its node, synchronously: the
// node's CheckTx answer comes back, and a rejection fails the warm-up.
func submitWarmup(ctx context.Context, p *plan.Testnet, txs []node.Tx) error {
	for _, tx := range txs {
		n := p.Node(tx.Node)
		if n == nil {
			return fmt.Errorf("warm-up: no node %q in the plan", tx.Node)
		}
		code, msg, err := load.Broadcast(ctx, n.RPCURL(), "broadcast_tx_sync", tx.Data)
		if err != nil {
			return fmt.Errorf("warm-up: %s unreachable: %w", tx.Node, err)
		}
		if code != 0 {
			return fmt.Errorf("warm-up: %s rejected a tx (code %d): %s", tx.Node, code, msg)
		}
	}
	return nil
}

// chainNodes are the named nodes of p that keep the chain at its pace
// (not seeds), in names' order.
func chainNodes(p *plan.Testnet, names []string) []*plan.Node {
	byName := map[string]*plan.Node{}
	for _, n := range p.Nodes {
		byName[n.Name] = n
	}
	var out []*plan.Node
	for _, name := range names {
		if n := byName[name]; n != nil && n.Role != "seed" {
			out = append(out, n)
		}
	}
	return out
}

// blockInterval is the mean interval between the metas' blocks (ascending),
// 0 when fewer than two.
func blockInterval(metas []cometrpc.BlockMeta) time.Duration {
	if len(metas) < 2 {
		return 0
	}
	return metas[len(metas)-1].Time.Sub(metas[0].Time) / time.Duration(len(metas)-1)
}

// warmupLimit is the warm-up's limit stretched to 4 block intervals when the
// chain is slower than the limit allows for.
func warmupLimit(limit time.Duration, metas []cometrpc.BlockMeta) time.Duration {
	return max(limit, 4*blockInterval(metas))
}

// window is a CometBFT run's measured window: the blocks above the harvest
// node's height at Open, the mempools polled meanwhile (mempool.csv).
type window struct {
	p      *plan.Testnet
	hv     harvest.Node
	from   int64
	rpc    *cometrpc.Client
	poller *harvest.MempoolPoller
	stop   context.CancelFunc
	done   chan struct{}
	// the progress line's state
	lastHeight int64
}

// Open picks the harvest node (the first validator that answers): blocks
// at or below its current height were sealed before the first run tx
// existed, so the window starts just above it. The mempool poller takes a
// node in once it runs (a late joiner from its start, no failed poll
// before).
func (d *Driver) Open(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, running func(string) bool) (node.TxWindow, error) {
	hv, height, err := harvestNode(ctx, p)
	if err != nil {
		return nil, err
	}
	w := &window{p: p, hv: hv, from: height + 1, rpc: cometrpc.New(hv.URL), done: make(chan struct{})}
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	w.stop = stop
	w.poller = harvest.NewMempoolPoller(dir.Path, harvest.Nodes(p), mempoolInterval)
	w.poller.Running = running
	go func() { defer close(w.done); _, _ = w.poller.Run(pctx) }()
	return w, nil
}

// harvestNode picks the first validator that answers, and its height.
func harvestNode(ctx context.Context, p *plan.Testnet) (harvest.Node, int64, error) {
	var errs []error
	for _, n := range p.Validators() {
		st, err := cometrpc.New(n.RPCURL()).Status(ctx)
		if err == nil {
			return harvest.Node{Name: n.Name, URL: n.RPCURL()}, st.Height, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
	}
	return harvest.Node{}, 0, fmt.Errorf("no validator answers RPC: %w", errors.Join(errs...))
}

// Progress asks the harvest node for its height and counts num_txs of the
// blocks sealed since the last call: all txs, ours and anyone's, but during
// a run they are ours.
func (w *window) Progress(ctx context.Context) (int, string) {
	qctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	committed := 0
	height := w.lastHeight
	if st, err := w.rpc.Status(qctx); err == nil {
		height = st.Height
		if w.lastHeight > 0 && height > w.lastHeight {
			if metas, err := w.rpc.BlockMetas(qctx, w.lastHeight+1, min(height, w.lastHeight+cometrpc.MaxBlockMetas)); err == nil {
				for _, m := range metas {
					committed += m.NumTxs
				}
			}
		}
		w.lastHeight = height
	}
	return committed, fmt.Sprintf("height %d  mempool peak %d", height, w.poller.Peak())
}

// Drain polls the named nodes' mempools (harvest.Drain).
func (w *window) Drain(ctx context.Context, names []string, grace time.Duration) node.Drained {
	nodes := slices.DeleteFunc(harvest.Nodes(w.p), func(n harvest.Node) bool { return !slices.Contains(names, n.Name) })
	dr, _ := harvest.Drain(ctx, nodes, grace)
	return dr
}

// Harvest fetches the window's blocks, from its start to the harvest
// node's height now.
func (w *window) Harvest(ctx context.Context, dir *rundir.Dir, drain *rundir.Drain) error {
	st, err := w.rpc.Status(ctx)
	if err != nil {
		return fmt.Errorf("harvest: %s: %w", w.hv.Name, err)
	}
	if _, err := harvest.HarvestWith(ctx, w.hv.URL, w.from, st.Height, dir.Path, harvest.Options{Drain: drain}); err != nil {
		return fmt.Errorf("harvest blocks %d..%d from %s: %w", w.from, st.Height, w.hv.Name, err)
	}
	return nil
}

// Close stops the mempool poller and waits for it.
func (w *window) Close() {
	w.stop()
	<-w.done
}
