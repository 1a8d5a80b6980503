package cometrpc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Block is what the harvester needs of /block?height=H.
type Block struct {
	Height   int64
	Hash     string // block ID hash, uppercase hex
	Time     time.Time
	Proposer string // proposer address, uppercase hex
	Txs      [][]byte
}

// TxHash is CometBFT's tx hash: uppercase hex SHA-256 of the tx bytes (what
// broadcast_tx_* returns as "hash").
func TxHash(tx []byte) string {
	sum := sha256.Sum256(tx)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// Block calls /block?height=H. The JSON shape (block_id, block.header.time,
// block.header.proposer_address, block.data.txs as base64) is the same in
// v0.34, v0.38 and v1.x; heights are strings.
func (c *Client) Block(ctx context.Context, height int64) (*Block, error) {
	var r struct {
		BlockID struct {
			Hash string `json:"hash"`
		} `json:"block_id"`
		Block struct {
			Header struct {
				Height   string    `json:"height"`
				Time     time.Time `json:"time"`
				Proposer string    `json:"proposer_address"`
			} `json:"header"`
			Data struct {
				Txs [][]byte `json:"txs"` // base64 in JSON; encoding/json decodes it
			} `json:"data"`
		} `json:"block"`
	}
	if err := c.call(ctx, "block", heightParam(height), &r); err != nil {
		return nil, err
	}
	h, err := strconv.ParseInt(r.Block.Header.Height, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("block %d: height %q: %w", height, r.Block.Header.Height, err)
	}
	if h != height {
		return nil, fmt.Errorf("block %d: node answered height %d", height, h)
	}
	return &Block{Height: h, Hash: r.BlockID.Hash, Time: r.Block.Header.Time,
		Proposer: r.Block.Header.Proposer, Txs: r.Block.Data.Txs}, nil
}

// TxResult is the execution result of one tx of a block (DeliverTx up to
// v0.37, ExecTxResult of FinalizeBlock from v0.38).
type TxResult struct {
	Code      uint32
	Log       string
	Codespace string
}

// BlockResults calls /block_results?height=H and returns the tx results in
// block order. Every release from v0.34 to v1.x names the list
// "txs_results" (null for a block without txs); v0.34/v0.37 put
// begin/end_block_events beside it, v0.38+ finalize_block_events.
func (c *Client) BlockResults(ctx context.Context, height int64) ([]TxResult, error) {
	var r struct {
		Height string `json:"height"`
		Txs    []struct {
			Code      uint32 `json:"code"`
			Log       string `json:"log"`
			Codespace string `json:"codespace"`
		} `json:"txs_results"`
	}
	if err := c.call(ctx, "block_results", heightParam(height), &r); err != nil {
		return nil, err
	}
	if r.Height != strconv.FormatInt(height, 10) {
		return nil, fmt.Errorf("block_results %d: node answered height %q", height, r.Height)
	}
	out := make([]TxResult, len(r.Txs))
	for i, t := range r.Txs {
		out[i] = TxResult{Code: t.Code, Log: t.Log, Codespace: t.Codespace}
	}
	return out, nil
}

// BlockMeta is one entry of /blockchain: the only RPC answer that carries a
// block's encoded size.
type BlockMeta struct {
	Height int64
	Time   time.Time
	Size   int64 // bytes of the protobuf-encoded block
	NumTxs int
}

// MaxBlockMetas is how many metas /blockchain returns per call at most.
const MaxBlockMetas = 20

// BlockMetas calls /blockchain?minHeight=&maxHeight= and returns the metas in
// ascending height order. The node caps the answer at MaxBlockMetas, so the
// caller asks for at most that many.
func (c *Client) BlockMetas(ctx context.Context, minHeight, maxHeight int64) ([]BlockMeta, error) {
	var r struct {
		Metas []struct {
			Size   string `json:"block_size"`
			NumTxs string `json:"num_txs"`
			Header struct {
				Height string    `json:"height"`
				Time   time.Time `json:"time"`
			} `json:"header"`
		} `json:"block_metas"`
	}
	p := url.Values{}
	p.Set("minHeight", strconv.FormatInt(minHeight, 10))
	p.Set("maxHeight", strconv.FormatInt(maxHeight, 10))
	if err := c.call(ctx, "blockchain", p, &r); err != nil {
		return nil, err
	}
	out := make([]BlockMeta, 0, len(r.Metas))
	// The node lists metas from maxHeight down.
	for i := len(r.Metas) - 1; i >= 0; i-- {
		m := r.Metas[i]
		h, err1 := strconv.ParseInt(m.Header.Height, 10, 64)
		size, err2 := strconv.ParseInt(m.Size, 10, 64)
		n, err3 := strconv.Atoi(m.NumTxs)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("blockchain %d-%d: bad meta height=%q block_size=%q num_txs=%q",
				minHeight, maxHeight, m.Header.Height, m.Size, m.NumTxs)
		}
		out = append(out, BlockMeta{Height: h, Time: m.Header.Time, Size: size, NumTxs: n})
	}
	return out, nil
}

// NumUnconfirmedTxs is MempoolSize under the RPC method's name.
func (c *Client) NumUnconfirmedTxs(ctx context.Context) (int, error) { return c.MempoolSize(ctx) }

func heightParam(h int64) url.Values {
	return url.Values{"height": {strconv.FormatInt(h, 10)}}
}
