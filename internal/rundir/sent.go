package rundir

import (
	"strconv"
	"strings"
)

// Results of a send attempt (sent.csv's result column).
const (
	ResultOK        = "ok"         // transport accepted it (sync: CheckTx code 0)
	ResultRejected  = "rejected"   // the node answered no: CheckTx code != 0, or a JSON-RPC error
	ResultSendError = "send_error" // transport/connection failure; Log has the error
)

// Sent is one row of sent.csv: one tx the load generator attempted, written
// as it completes (so rows are in completion order, not seq order). Times
// are unix nanoseconds.
type Sent struct {
	Seq      uint64
	Conn     int
	Node     string
	Hash     string // uppercase hex SHA-256 of the tx bytes (CometBFT's tx hash)
	Intended int64  // scheduled send time, t0 + offset(i)
	SentAt   int64  // when the write started (or queued behind txs the node had not read yet)
	Ack      int64  // when the RPC answered; 0 for none
	Result   string // ResultOK, ResultRejected or ResultSendError
	// Code is the CheckTx code (sync), or the JSON-RPC error code when the
	// node answered with an error instead of a result: negative (v1.0.1
	// answers -32603 for a full mempool), so it is signed.
	Code int64
	Log  string
}

// SentCSV is sent.csv (written by load, read by harvest and analyze).
var SentCSV = &CSV[Sent]{
	Name:   "sent.csv",
	Header: []string{"seq", "conn", "node", "hash", "intended_ns", "sent_ns", "ack_ns", "result", "code", "log"},
	encode: func(s *Sent, f []string) {
		f[0], f[1], f[2], f[3] = strconv.FormatUint(s.Seq, 10), strconv.Itoa(s.Conn), s.Node, s.Hash
		f[4], f[5], f[6] = i64(s.Intended), i64(s.SentAt), i64(s.Ack)
		f[7], f[8], f[9] = s.Result, i64(s.Code), s.Log
	},
	decode: func(s *Sent, f *fields) {
		s.Seq, s.Conn, s.Node, s.Hash = f.Uint64(0), f.Int(1), f.Sym(2), strings.ToUpper(f.Str(3))
		s.Intended, s.SentAt, s.Ack = f.Int64(4), f.Int64(5), f.Int64(6)
		s.Result, s.Code, s.Log = f.Sym(7), f.Int64(8), f.Str(9)
		switch s.Result {
		case ResultOK, ResultRejected, ResultSendError:
		default:
			f.Fail(7, "%q: want ok, rejected or send_error", s.Result)
		}
	},
}
