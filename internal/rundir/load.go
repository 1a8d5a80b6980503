package rundir

import "time"

// LoadFile is load.json.
const LoadFile = "load.json"

// LoadSummary is load.json: the load generator's own account of one run,
// certifying it (written by the scenario from the generator's summary).
// Its JSON keys are the Go field names.
type LoadSummary struct {
	RunID    string
	Start    time.Time // t0 of every schedule
	End      time.Time // last send
	Expected int       // txs the configuration asks for
	// Attempted = Sent + SendErrors; Sent = OK + Rejected (the data contract).
	Attempted, Sent, OK, Rejected, SendErrors int
	Conns                                     []LoadConn
	Valid                                     bool
	Invalid                                   []string // why not valid
	// Skipped lists the nodes the load would have targeted but that were
	// not running when it began (a late start_delay node, a [rotate] node):
	// their share went to the running targets, so no tx is missing.
	Skipped []LoadSkip `json:",omitempty"`
}

// BlockedShare is the largest share of one connection's worst lag that its
// sender spent waiting on the node's unread queue (judge.Cell.BlockedShare;
// at most 1: a node that reads in bursts can make the waits add up to more
// than the lag they left). 0 when no connection lagged.
func (ls *LoadSummary) BlockedShare() float64 {
	share := 0.0
	for _, c := range ls.Conns {
		if c.LagMaxMs > 0 {
			share = max(share, min(1, c.BlockedS/(c.LagMaxMs/1000)))
		}
	}
	return share
}

// LoadSkip is one load target left out, and why.
type LoadSkip struct {
	Node   string
	Reason string
}

// LoadConn is one connection's target vs achieved rate and lag.
type LoadConn struct {
	Node       string
	Conn       int
	Attempted  int
	Rejected   int
	Errors     int     // send_error rows
	TargetRate float64 // tx/s, from the intended send times
	Achieved   float64 // tx/s, from the actual send times
	LagP50Ms   float64
	LagP99Ms   float64
	LagMaxMs   float64
	// BlockedS is how long the sender waited because the node had not
	// read its queue (16 MiB): the node's backpressure. A lag it explains
	// was set by the node; a starved generator's queue is empty. 0 where
	// the transport does not measure it (gorilla's, HTTP).
	BlockedS float64 `json:",omitempty"`
}

// ReadLoad reads load.json.
func (d *Dir) ReadLoad() (*LoadSummary, error) {
	var s LoadSummary
	if err := d.ReadJSON(LoadFile, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// WriteLoad writes load.json.
func (d *Dir) WriteLoad(s *LoadSummary) error { return d.WriteJSON(LoadFile, s) }
