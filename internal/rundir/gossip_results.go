package rundir

// GossipResults is results.json's "gossip" section: the summary of a gossip
// run, computed from published.csv, traces/*.csv, events.jsonl and
// metrics/proc.csv (internal/kinds/gossipsub/analysis). Times are in ms.
type GossipResults struct {
	Nodes    int `json:"nodes"`
	Messages int `json:"messages"` // published messages (the MDR's denominator unit)
	// Expected = Messages x (Nodes - 1): every other node should deliver each.
	Expected  int     `json:"expected_deliveries"`
	Delivered int     `json:"delivered"`
	MDR       float64 `json:"mdr"` // Delivered / Expected
	// Missing counts undelivered (message, node) pairs by attributed reason:
	// host_exited, host_paused, host_cut_off, dropped_rpc, queue_full, rejected, no_trace, never_reached.
	Missing map[string]int `json:"missing,omitempty"`

	// Dissemination is publish -> delivery over every delivery (Whiteblock's
	// TotalNanoTime); LastDelivery is publish -> last delivery per message.
	Dissemination Stats `json:"dissemination_ms"`
	LastDelivery  Stats `json:"last_delivery_ms"`
	// LastDeliveryHop is the depth of each message's last delivery in its
	// first-delivery tree; MaxHop the tree's depth (the longest
	// sender-to-recipient chain, Whiteblock's "last delivery hop").
	LastDeliveryHop Stats `json:"last_delivery_hop"`
	MaxHop          Stats `json:"max_hop"`
	// Histograms by hop count (index = hops) over messages (LastDeliveryHop,
	// MaxHop) and over every delivery (DeliveryHop).
	LastDeliveryHopHist []int `json:"last_delivery_hop_hist"`
	MaxHopHist          []int `json:"max_hop_hist"`
	DeliveryHopHist     []int `json:"delivery_hop_hist"`
	// HopsUnknown counts deliveries whose forwarder chain does not reach the
	// publisher (a forwarder's trace is missing).
	HopsUnknown int `json:"hops_unknown,omitempty"`
	// Duplicates is copies after the first per (message, receiving node).
	Duplicates Stats `json:"duplicates"`
	// Trace event counts (whole run).
	DroppedRPC    int `json:"dropped_rpc"`
	Undeliverable int `json:"undeliverable"`
	Rejected      int `json:"rejected"`
	// UnknownMessages counts traced message IDs published.csv does not list.
	UnknownMessages int `json:"unknown_messages,omitempty"`

	// MachineBusyPct is the machine's CPU busy share (all cores, from
	// metrics/host.csv) over the publish schedule; 0 when not sampled.
	MachineBusyPct float64 `json:"machine_cpu_busy_pct,omitempty"`

	Publish   PublishStats `json:"publish"`
	HostNodes []GossipNode `json:"per_node"`
	Harness   *ProcStats   `json:"harness,omitempty"` // the harness's own CPU and RSS
}

// PublishStats certifies the publish generator as ConnStats certifies the
// tx load: its target and achieved rate and how far it lagged its schedule.
type PublishStats struct {
	Scheduled  int     `json:"scheduled"` // rows of published.csv
	SendErrors int     `json:"send_errors"`
	TargetRate float64 `json:"target_rate"`
	Achieved   float64 `json:"achieved_rate"`
	LagP50Ms   float64 `json:"lag_p50_ms"`
	LagP99Ms   float64 `json:"lag_p99_ms"`
	LagMaxMs   float64 `json:"lag_max_ms"`
}

// GossipNode is one host's share of a gossip run.
type GossipNode struct {
	Name       string         `json:"name"`
	Published  int            `json:"published"`
	Expected   int            `json:"expected"` // messages others published
	Delivered  int            `json:"delivered"`
	MDR        float64        `json:"mdr"`
	Missing    map[string]int `json:"missing,omitempty"`
	Duplicates float64        `json:"duplicates_avg"` // per delivered message
	Exited     bool           `json:"exited"`         // down at some point: died, killed or stopped (Outages)
	Outages    []Outage       `json:"outages,omitempty"`
	Proc       ProcStats      `json:"proc"`
}

// ProcStats is a process's CPU (percent of one core, between proc.csv
// samples) and resident memory over the run.
type ProcStats struct {
	Samples   int     `json:"samples"`
	CPUMaxPct float64 `json:"cpu_max_pct"`
	CPUAvgPct float64 `json:"cpu_avg_pct"`
	RSSMaxMB  float64 `json:"rss_max_mb"`
	RSSAvgMB  float64 `json:"rss_avg_mb"`
}
