package rundir

import (
	"strconv"
	"strings"
)

// End states of a sent tx (txs.csv's state column). Every tx in sent.csv
// whose send did not fail ends in exactly one of the first four:
// sent = committed + rejected + lost + pending.
const (
	StateCommitted = "committed" // in a block with code 0
	StateRejected  = "rejected"  // refused by CheckTx, or executed with a code != 0
	// StateLost: never seen in a block by the end of a full grace period
	// (the drain waited until every mempool was empty, or for all of grace).
	StateLost = "lost"
	// StatePending: not in a block when an interrupted run stopped waiting
	// for the mempools to drain; it might still have been committed.
	StatePending   = "pending"
	StateSendError = "send_error" // the send failed; not counted in sent
)

// Tx is one row of txs.csv: a row of sent.csv with its end state and, when
// it reached a block, the block and the latencies to its time (H) and to
// the next block's time (H+1).
type Tx struct {
	Seq           uint64
	Node          string
	Conn          int
	Hash          string
	IntendedNs    int64
	SentNs        int64
	State         string
	Code          int64 // CheckTx/JSON-RPC code of a rejection, or the block result's code
	Log           string
	Height        int64 // 0: in no block
	BlockTimeNs   int64
	LatencyMs     float64 // block H − sent; valid if HasLatency
	LatencyNextMs float64 // block H+1 − sent; valid if HasNext
	HasLatency    bool
	HasNext       bool
}

// Headline is the tx's latency from the block results.json names
// (LatencyBlock: "H+1", else H), and whether it has one.
func (t *Tx) Headline(latencyBlock string) (ms float64, ok bool) {
	if latencyBlock == "H+1" {
		return t.LatencyNextMs, t.HasNext
	}
	return t.LatencyMs, t.HasLatency
}

// TxsCSV is txs.csv (written by analyze, read by report). Cells that do not
// apply are empty: code unless rejected or non-zero, height and block time
// unless in a block, latencies unless committed (and H+1 harvested).
// Latencies are milliseconds with microsecond precision.
var TxsCSV = &CSV[Tx]{
	Name: "txs.csv",
	Header: []string{"seq", "node", "conn", "hash", "intended_ns", "sent_ns", "state", "code", "log",
		"height", "block_time_ns", "latency_ms", "latency_next_ms"},
	encode: func(t *Tx, f []string) {
		f[0], f[1], f[2], f[3] = strconv.FormatUint(t.Seq, 10), t.Node, strconv.Itoa(t.Conn), t.Hash
		f[4], f[5], f[6], f[8] = i64(t.IntendedNs), i64(t.SentNs), t.State, t.Log
		if t.Code != 0 || t.State == StateRejected {
			f[7] = i64(t.Code)
		}
		if t.Height != 0 {
			f[9], f[10] = i64(t.Height), i64(t.BlockTimeNs)
		}
		if t.HasLatency {
			f[11] = strconv.FormatFloat(t.LatencyMs, 'f', 3, 64)
		}
		if t.HasNext {
			f[12] = strconv.FormatFloat(t.LatencyNextMs, 'f', 3, 64)
		}
	},
	decode: func(t *Tx, f *fields) {
		t.Seq, t.Node, t.Conn, t.Hash = f.Uint64(0), f.Sym(1), f.Int(2), strings.ToUpper(f.Str(3))
		t.IntendedNs, t.SentNs, t.State, t.Code, t.Log = f.Int64(4), f.Int64(5), f.Sym(6), f.Int64(7), f.Str(8)
		t.Height, t.BlockTimeNs = f.Int64(9), f.Int64(10)
		t.LatencyMs, t.HasLatency = f.Float(11)
		t.LatencyNextMs, t.HasNext = f.Float(12)
		switch t.State {
		case StateCommitted, StateRejected, StateLost, StatePending, StateSendError:
		default:
			f.Fail(6, "%q: want committed, rejected, lost, pending or send_error", t.State)
		}
	},
}
