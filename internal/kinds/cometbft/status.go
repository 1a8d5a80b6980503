package cometbft

import (
	"context"
	"strconv"

	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

var _ node.Statuser = (*Driver)(nil)

// StatusColumns are what `benchnet status` shows of a CometBFT node
// (node.Statuser).
func (d *Driver) StatusColumns() []string {
	return []string{"HEIGHT", "PEERS", "MEMPOOL", "CATCHING_UP"}
}

// Status asks n's RPC for its height, peers, mempool size and whether it
// is catching up; peers and mempool are "-" when only they fail.
func (d *Driver) Status(ctx context.Context, n *plan.Node) ([]string, error) {
	c := d.client(n)
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{strconv.FormatInt(st.Height, 10), "-", "-", strconv.FormatBool(st.CatchingUp)}
	if p, err := c.Peers(ctx); err == nil {
		out[1] = strconv.Itoa(p)
	}
	if m, err := c.MempoolSize(ctx); err == nil {
		out[2] = strconv.Itoa(m)
	}
	return out, nil
}
