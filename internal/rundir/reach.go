package rundir

// MempoolReach is results.json's gossip-propagation figure of a load sent
// to a single node (Initia's TestBenchmarkGossipPropagation: every tx to
// node 0): from the first run tx sent, how long until each polled node's
// mempool held a tx, and until every one did. The resolution is the
// mempool poller's interval (PollMs), stated with the figures.
type MempoolReach struct {
	Target string      `json:"target"`  // the one node the load went to
	PollMs float64     `json:"poll_ms"` // the poller's median interval per node
	Nodes  []NodeReach `json:"nodes"`   // every polled node but the seeds, by name
	// AllMs is the time until every polled node's mempool held a tx (the
	// slowest node's ReachMs); -1 when one never did.
	AllMs float64 `json:"all_ms"`
	// Late names the nodes first polled after the first send (they joined
	// during the load: rotating or late nodes), left out of Nodes.
	Late []string `json:"late,omitempty"`
}

// NodeReach is one node's first sample holding a tx after the first send:
// ms after it, -1 when none did.
type NodeReach struct {
	Node    string  `json:"node"`
	ReachMs float64 `json:"reach_ms"`
}
