// Package cometrpc is the small part of CometBFT's JSON-RPC that the harness
// reads to watch nodes and harvest their chain: status, mempool size, peers,
// blocks, block metas and block results. It speaks plain HTTP GET (URI
// style), whose shape is the same from v0.34 to v1.x: testdata/ holds real
// answers of v0.38.17 and v1.0.1 that the tests decode.
package cometrpc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxBody bounds one answer. A /block of 10k txs of 1 KiB is ~14 MB of
// base64; the bound only guards against a runaway peer.
const maxBody = 256 << 20

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
	if err := c.call(ctx, "status", nil, &r); err != nil {
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
	if err := c.call(ctx, "num_unconfirmed_txs", nil, &r); err != nil {
		return 0, err
	}
	return strconv.Atoi(r.N)
}

// AppPoolPath is the abci_query path at which an app keeping the mempool
// (cometbft v0.40's [mempool] type = "app": benchnet's accounts app)
// answers how many txs it holds, as 8 big-endian bytes: the node's own
// num_unconfirmed_txs reads 0 there.
const AppPoolPath = "/pool"

// AppPoolSize asks the node's app, through abci_query, how many txs its
// app-side mempool holds.
func (c *Client) AppPoolSize(ctx context.Context) (int, error) {
	var r struct {
		Response struct {
			Code  uint32 `json:"code"`
			Log   string `json:"log"`
			Value []byte `json:"value"` // base64 in JSON
		} `json:"response"`
	}
	if err := c.call(ctx, "abci_query", url.Values{"path": {strconv.Quote(AppPoolPath)}}, &r); err != nil {
		return 0, err
	}
	if r.Response.Code != 0 || len(r.Response.Value) != 8 {
		return 0, fmt.Errorf("abci_query %s: code %d, %d bytes: %s", AppPoolPath, r.Response.Code, len(r.Response.Value), r.Response.Log)
	}
	return int(binary.BigEndian.Uint64(r.Response.Value)), nil
}

// Peers calls /net_info and returns the number of connected peers.
func (c *Client) Peers(ctx context.Context) (int, error) {
	var r struct {
		N string `json:"n_peers"`
	}
	if err := c.call(ctx, "net_info", nil, &r); err != nil {
		return 0, err
	}
	return strconv.Atoi(r.N)
}

func (c *Client) call(ctx context.Context, method string, params url.Values, result any) error {
	u := c.URL + "/" + method
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%s: read: %w", method, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("%s: answer larger than %d bytes", method, maxBody)
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
