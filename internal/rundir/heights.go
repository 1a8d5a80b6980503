package rundir

// HeightSample is one row of heights.csv: one node's latest block height and
// whether it said it was catching up (block sync), at one poll. A node that
// did not answer (killed, paused, not started) has no row at that time.
type HeightSample struct {
	TimeNs     int64
	Node       string
	Height     int64
	CatchingUp bool
}

// HeightsCSV is heights.csv (written during a run with perturbations or
// rotating nodes by scenario's height poller, read by analyze and report).
var HeightsCSV = &CSV[HeightSample]{
	Name:   "heights.csv",
	Header: []string{"time_ns", "node", "height", "catching_up"},
	encode: func(h *HeightSample, f []string) {
		f[0], f[1], f[2], f[3] = i64(h.TimeNs), h.Node, i64(h.Height), "0"
		if h.CatchingUp {
			f[3] = "1"
		}
	},
	decode: func(h *HeightSample, f *fields) {
		h.TimeNs, h.Node, h.Height, h.CatchingUp = f.Int64(0), f.Sym(1), f.Int64(2), f.Int(3) != 0
	},
}
