// Package cometrpc is the small part of CometBFT's JSON-RPC that the harness
// reads to watch nodes: status, mempool size, peers. It speaks plain HTTP GET,
// whose shape is the same from v0.34 to v1.x.
package cometrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client talks to one node's RPC endpoint.
type Client struct {
	URL  string // e.g. http://10.213.0.2:26657
	HTTP *http.Client
}

// New returns a client with a short per-request timeout: a node that does not
// answer quickly is reported as not answering, never waited on.
func New(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{Timeout: 2 * time.Second}}
}

// Status is what /status says about the node's chain.
type Status struct {
	Moniker    string
	NodeID     string
	Version    string
	Height     int64
	BlockTime  time.Time
	CatchingUp bool
}

// Status calls /status.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var r struct {
		NodeInfo struct {
			ID      string `json:"id"`
			Moniker string `json:"moniker"`
			Version string `json:"version"`
		} `json:"node_info"`
		SyncInfo struct {
			Height     string    `json:"latest_block_height"`
			Time       time.Time `json:"latest_block_time"`
			CatchingUp bool      `json:"catching_up"`
		} `json:"sync_info"`
	}
	if err := c.call(ctx, "status", &r); err != nil {
		return nil, err
	}
	h, err := strconv.ParseInt(r.SyncInfo.Height, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("status: height %q: %w", r.SyncInfo.Height, err)
	}
	return &Status{
		Moniker: r.NodeInfo.Moniker, NodeID: r.NodeInfo.ID, Version: r.NodeInfo.Version,
		Height: h, BlockTime: r.SyncInfo.Time, CatchingUp: r.SyncInfo.CatchingUp,
	}, nil
}

// MempoolSize calls /num_unconfirmed_txs and returns the number of txs.
func (c *Client) MempoolSize(ctx context.Context) (int, error) {
	var r struct {
		N string `json:"n_txs"`
	}
	if err := c.call(ctx, "num_unconfirmed_txs", &r); err != nil {
		return 0, err
	}
	return strconv.Atoi(r.N)
}

// Peers calls /net_info and returns the number of connected peers.
func (c *Client) Peers(ctx context.Context) (int, error) {
	var r struct {
		N string `json:"n_peers"`
	}
	if err := c.call(ctx, "net_info", &r); err != nil {
		return 0, err
	}
	return strconv.Atoi(r.N)
}

func (c *Client) call(ctx context.Context, method string, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/"+method, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s: read: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d: not JSON-RPC: %.200q", method, resp.StatusCode, body)
	}
	if env.Error != nil {
		return fmt.Errorf("%s: RPC error %d: %s %s", method, env.Error.Code, env.Error.Message, env.Error.Data)
	}
	if err := json.Unmarshal(env.Result, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}
