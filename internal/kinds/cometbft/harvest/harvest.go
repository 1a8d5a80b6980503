// Package harvest reads back what the chain did with a run's load: it waits
// for mempools to drain, fetches every block of the run's height range with
// its tx results, and polls mempool sizes during the run. It writes the
// run directory files that analyze reads (blocks.csv, block_txs.csv,
// harvest.json, mempool.csv); the formats live in package rundir.
package harvest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Node is one RPC endpoint to watch.
type Node struct {
	Name string
	URL  string
	// AppPool: the node's app keeps the mempool ([mempool] type = "app"),
	// so its size is the app's (cometrpc.AppPoolSize), not the node's.
	AppPool bool
}

// Nodes lists the plan's nodes with their RPC endpoints.
func Nodes(t *plan.Testnet) []Node {
	out := make([]Node, 0, len(t.Nodes))
	for _, n := range t.Nodes {
		out = append(out, Node{Name: n.Name, URL: n.RPCURL(), AppPool: n.Mempool == manifest.MempoolApp})
	}
	return out
}

// Options tune Harvest; the zero value is usable.
type Options struct {
	// InFlight is how many heights are fetched at once (default 4): enough
	// to hide RPC latency without loading a node that is still busy.
	InFlight int
	// NextBlockWait bounds the wait for block to+1, whose time ends the H+1
	// latency of txs committed at to (default 15 s).
	NextBlockWait time.Duration
	// Timeout per RPC request (default 30 s: a full block can be big).
	Timeout time.Duration
	// Drain is how the wait for the mempools before the harvest ended,
	// recorded in harvest.json (nil: not recorded).
	Drain *rundir.Drain
	// Recovered, when set, is recorded in harvest.json: the blocks come
	// from a node's store after the run did not finish (see Offline).
	Recovered *rundir.Recovery
}

// Commit is where one tx landed.
type Commit struct {
	Height int64
	Index  int
	Code   uint32
	Log    string
}

// Result is what Harvest fetched.
type Result struct {
	Blocks []rundir.Block // from..to, then to+1 when it came in time
	Txs    map[string][]Commit
	Next   bool // block to+1 was fetched
}

// Harvest fetches blocks from..to of the node at rpcURL with their tx
// results, and block to+1 for its time. It writes blocks.csv, block_txs.csv
// and harvest.json into dir and returns the per-tx index (hash → commits in
// chain order). run_txs counts the txs of each block listed in dir's
// sent.csv (0 everywhere when there is none yet).
func Harvest(ctx context.Context, rpcURL string, from, to int64, dir string) (*Result, error) {
	return HarvestWith(ctx, rpcURL, from, to, dir, Options{})
}

// HarvestWith is Harvest with options.
func HarvestWith(ctx context.Context, rpcURL string, from, to int64, dir string, opt Options) (*Result, error) {
	if from < 1 || to < from {
		return nil, fmt.Errorf("harvest: bad height range %d-%d", from, to)
	}
	if opt.InFlight <= 0 {
		opt.InFlight = 4
	}
	if opt.NextBlockWait <= 0 {
		opt.NextBlockWait = 15 * time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	c := cometrpc.New(rpcURL)
	c.HTTP.Timeout = opt.Timeout

	d := &rundir.Dir{Path: dir}
	runTxs, err := sentHashes(rundir.SentCSV.Path(d))
	if err != nil {
		return nil, err
	}

	n := int(to - from + 1)
	out := make([]fetched, n)
	// Sizes come from /blockchain, 20 metas per call.
	sizes := map[int64]int64{}
	for lo := from; lo <= to; lo += cometrpc.MaxBlockMetas {
		hi := min(lo+cometrpc.MaxBlockMetas-1, to)
		metas, err := c.BlockMetas(ctx, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("harvest: block sizes %d-%d: %w", lo, hi, err)
		}
		for _, m := range metas {
			sizes[m.Height] = m.Size
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	heights := make(chan int64)
	for w := 0; w < opt.InFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range heights {
				f, err := fetchBlock(ctx, c, h, sizes[h], runTxs, opt.NextBlockWait)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				out[h-from] = f
			}
		}()
	}
feed:
	for h := from; h <= to; h++ {
		select {
		case heights <- h:
		case <-ctx.Done():
			break feed
		}
	}
	close(heights)
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("harvest: %w", firstErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("harvest: %w", err)
	}

	res := &Result{Txs: map[string][]Commit{}}
	var txRows []rundir.BlockTx
	for _, f := range out {
		res.Blocks = append(res.Blocks, f.row)
		for _, t := range f.txs {
			txRows = append(txRows, t)
			res.Txs[t.Hash] = append(res.Txs[t.Hash], Commit{Height: t.Height, Index: t.Index, Code: t.Code, Log: t.Log})
		}
	}
	next, err := waitBlock(ctx, c, to+1, opt.NextBlockWait)
	if err != nil {
		return nil, fmt.Errorf("harvest: block %d: %w", to+1, err)
	}
	info := rundir.Harvest{RPCURL: rpcURL, From: from, To: to, Drain: opt.Drain, Recovered: opt.Recovered}
	if next != nil {
		res.Next, info.NextHeight = true, next.Height
		var size int64
		if metas, err := c.BlockMetas(ctx, next.Height, next.Height); err == nil && len(metas) == 1 {
			size = metas[0].Size
		}
		res.Blocks = append(res.Blocks, blockRow(next, size, runTxs))
	}

	if err := rundir.BlocksCSV.WriteFile(rundir.BlocksCSV.Path(d), res.Blocks); err != nil {
		return nil, err
	}
	if err := rundir.BlockTxsCSV.WriteFile(rundir.BlockTxsCSV.Path(d), txRows); err != nil {
		return nil, err
	}
	if err := d.WriteHarvest(&info); err != nil {
		return nil, err
	}
	return res, nil
}

// fetched is one height: its blocks.csv row and block_txs.csv rows.
type fetched struct {
	row rundir.Block
	txs []rundir.BlockTx
}

func fetchBlock(ctx context.Context, c *cometrpc.Client, h, size int64, runTxs map[string]bool, wait time.Duration) (fetched, error) {
	var f fetched
	b, err := c.Block(ctx, h)
	if err != nil {
		return f, err
	}
	results, err := blockResults(ctx, c, h, wait)
	if err != nil {
		return f, err
	}
	if len(results) != len(b.Txs) {
		return f, fmt.Errorf("block %d: %d txs but %d results", h, len(b.Txs), len(results))
	}
	f.row = blockRow(b, size, runTxs)
	for i, tx := range b.Txs {
		f.txs = append(f.txs, rundir.BlockTx{Height: h, Index: i, Hash: cometrpc.TxHash(tx),
			Code: results[i].Code, Log: results[i].Log})
	}
	return f, nil
}

func blockRow(b *cometrpc.Block, size int64, runTxs map[string]bool) rundir.Block {
	row := rundir.Block{Height: b.Height, TimeNs: b.Time.UnixNano(), NumTxs: len(b.Txs), SizeBytes: size, Proposer: b.Proposer}
	for _, tx := range b.Txs {
		if runTxs[cometrpc.TxHash(tx)] {
			row.RunTxs++
		}
	}
	return row
}

// blockResults fetches height h's tx results, waiting up to wait for
// them: a node stores block h before it executes it, so the newest block
// its status reports has no results until FinalizeBlock returns (a build
// whose FinalizeBlock took 1.5 s failed 2 of 10 harvests on "could not
// find results for height" without this).
func blockResults(ctx context.Context, c *cometrpc.Client, h int64, wait time.Duration) ([]cometrpc.TxResult, error) {
	deadline := time.Now().Add(wait)
	for {
		results, err := c.BlockResults(ctx, h)
		if err == nil || !strings.Contains(err.Error(), "could not find results") || time.Now().After(deadline) {
			return results, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitBlock fetches block h, waiting up to wait for the chain to reach it.
// It returns nil, nil when the chain did not get there in time.
func waitBlock(ctx context.Context, c *cometrpc.Client, h int64, wait time.Duration) (*cometrpc.Block, error) {
	deadline := time.Now().Add(wait)
	for {
		st, err := c.Status(ctx)
		if err == nil && st.Height >= h {
			return c.Block(ctx, h)
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sentHashes reads the hashes of sent.csv; a missing file is an empty set.
func sentHashes(path string) (map[string]bool, error) {
	rows, _, err := rundir.SentCSV.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("harvest: %w", err)
	}
	set := make(map[string]bool, len(rows))
	for _, r := range rows {
		set[r.Hash] = true
	}
	return set, nil
}
