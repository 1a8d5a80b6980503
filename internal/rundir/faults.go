package rundir

// FaultsFile is faults.json [FaultResults], written whole by the analysis.
const FaultsFile = "faults.json"

// RotateCycle is the detail of a rotate_cycle event: one ephemeral node's
// start from an empty home to the tip.
type RotateCycle struct {
	Cycle int    `json:"cycle"`
	Node  string `json:"node"`
	// StartNs is when the node was started; CaughtUpNs when it first said
	// catching_up false within a block of the tip (0: it did not).
	StartNs    int64 `json:"start_ns"`
	CaughtUpNs int64 `json:"caught_up_ns,omitempty"`
	// Height is its height then (every block synced: its home was empty);
	// Tip the highest height any node reported.
	Height int64 `json:"height"`
	Tip    int64 `json:"tip"`
	// StopNs is when it was stopped and wiped again.
	StopNs int64  `json:"stop_ns,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Perturbation is the measured effect of one [[perturb]] entry.
type Perturbation struct {
	Entry  int      `json:"entry"`
	Action string   `json:"action"`
	Nodes  []string `json:"nodes"`
	// StartNs..EndNs is the outage: from the action until it was undone
	// (restart, resume, heal) or, when it never was, the load's end.
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
	Undone  bool  `json:"undone"`
	// BlockRate is blocks/s of the run before the outage; Blocks the
	// blocks committed during it and Missed how many fewer than that rate
	// predicts (never negative).
	BlockRate float64 `json:"block_rate"`
	Blocks    int     `json:"blocks"`
	Missed    int     `json:"missed"`
	// FirstBlockS is the time from the action to the next block of the
	// chain (-1: none harvested after it); LongestGapS the longest
	// time without a block from the action to the outage's end.
	FirstBlockS float64 `json:"first_block_s"`
	LongestGapS float64 `json:"longest_gap_s"`
	// BackAtTip is, per target node, the time from the outage's end until
	// it was back within a block of the tip, not catching up (-1: never
	// seen there). Not measured for link-only or point actions on no node,
	// nor without a height poller (a gossipsub testnet has no chain).
	BackAtTip map[string]float64 `json:"back_at_tip_s,omitempty"`
	// Txs counts the txs sent to the targets during the outage by end
	// state (every one has one: committed, rejected, lost, send_error,
	// pending).
	Txs map[string]int `json:"txs"`
}

// Cycle is one rotating-node cycle with what the analysis derives.
type Cycle struct {
	RotateCycle
	CatchUpS   float64 `json:"catch_up_s"`   // start to caught up (-1: never)
	BlocksPerS float64 `json:"blocks_per_s"` // blocks synced per second of catch-up
	// Duplicates is the extra commits of run txs in blocks committed while
	// the node ran (start to stop).
	Duplicates int `json:"duplicates"`
}

// FaultResults is faults.json: each perturbation's effect and each rotate
// cycle, computed from the run's records (analyze.FaultEffects).
type FaultResults struct {
	Perturbations []Perturbation `json:"perturbations"`
	Cycles        []Cycle        `json:"cycles"`
	// NoChain: the run had no chain (a gossipsub testnet: no heights, blocks
	// or txs), so each perturbation's block, tx and back-at-tip figures do
	// not apply (they are zero).
	NoChain bool `json:"no_chain,omitempty"`
	// Halted is the reason the chain halted past the halt limit ("" if not).
	Halted string `json:"halted,omitempty"`
}

// ReadFaults reads faults.json.
func (d *Dir) ReadFaults() (*FaultResults, error) {
	var f FaultResults
	if err := d.ReadJSON(FaultsFile, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// WriteFaults writes faults.json.
func (d *Dir) WriteFaults(f *FaultResults) error { return d.WriteJSON(FaultsFile, f) }
