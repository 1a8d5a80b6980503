package rundir

import "strconv"

// MempoolSample is one row of mempool.csv: one node's num_unconfirmed_txs
// at one poll.
type MempoolSample struct {
	TimeNs int64
	Node   string
	Size   int
}

// MempoolCSV is mempool.csv (appended by harvest's poller during the run,
// read by analyze and report).
var MempoolCSV = &CSV[MempoolSample]{
	Name:   "mempool.csv",
	Header: []string{"time_ns", "node", "size"},
	encode: func(m *MempoolSample, f []string) { f[0], f[1], f[2] = i64(m.TimeNs), m.Node, strconv.Itoa(m.Size) },
	decode: func(m *MempoolSample, f *fields) { m.TimeNs, m.Node, m.Size = f.Int64(0), f.Sym(1), f.Int(2) },
}
