package cometbft

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

var _ node.Settler = (*Driver)(nil)

// Settle is CometBFT's rule between an experiment's cells on one testnet:
// it polls every node until every mempool is empty and every node is two
// blocks past the highest height seen when it began, at most limit;
// seeds are left out.
func (d *Driver) Settle(ctx context.Context, p *plan.Testnet, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// Seeds keep no pace of their own (their chain follows their crawls).
	var nodes []*plan.Node
	for _, n := range p.Nodes {
		if n.Role != "seed" {
			nodes = append(nodes, n)
		}
	}
	clients := make([]*cometrpc.Client, len(nodes))
	var top int64
	for i, n := range nodes {
		clients[i] = cometrpc.New(n.RPCURL())
		st, err := clients[i].Status(ctx)
		if err != nil {
			return time.Since(start), fmt.Errorf("%s: %w", n.Name, err)
		}
		top = max(top, st.Height)
	}
	var why string
	for {
		why = ""
		for i, c := range clients {
			st, err := c.Status(ctx)
			if err != nil {
				why = fmt.Sprintf("%s: %v", nodes[i].Name, err)
				break
			}
			if st.Height < top+2 {
				why = fmt.Sprintf("%s at height %d, waiting for %d", nodes[i].Name, st.Height, top+2)
				break
			}
			size, err := c.MempoolSize(ctx)
			if err != nil {
				why = fmt.Sprintf("%s: %v", nodes[i].Name, err)
				break
			}
			if size > 0 {
				why = fmt.Sprintf("%s mempool holds %d txs", nodes[i].Name, size)
				break
			}
		}
		if why == "" {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return time.Since(start), fmt.Errorf("not settled within %s: %s", limit, why)
			}
			return time.Since(start), context.Cause(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
