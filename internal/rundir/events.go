package rundir

// The kinds of events.jsonl's lines (Event.Kind), in the order a run
// writes them. The strings are the file's format: readers match on them.
const (
	EventNetworkUp         = "network_up"          // the runner's network exists
	EventPrometheus        = "prometheus"          // the run's Prometheus server is up (detail: its address)
	EventLinkem            = "linkem"              // link emulation is set (detail: the backend)
	EventNodeStarted       = "node_started"        // a node's process started
	EventNodeStartFailed   = "node_start_failed"   // a node's process did not start
	EventSeedListening     = "seed_listening"      // a seed node answers
	EventGossipUp          = "gossip_up"           // every gossipsub host joined its topic
	EventTestnetReady      = "testnet_ready"       // every node reached height 2
	EventWarmupDone        = "warmup_done"         // every node committed a warm-up tx
	EventLoadTargetSkipped = "load_target_skipped" // a load target was not running
	EventLoadStart         = "load_start"          // the load's first send
	EventPublishStart      = "publish_start"       // the gossip publishers' first message
	EventRotateCycle       = "rotate_cycle"        // a rotating node's cycle (detail: what it did)
	EventPerturbStep       = "perturb_step"        // a perturbation was applied
	EventPerturbError      = "perturb_error"       // a perturbation failed
	EventNodeJoined        = "node_joined"         // a late node joined
	EventNodeExited        = "node_exited"         // a node's process ended
	EventChainHalted       = "chain_halted"        // no block for the halt timeout
	EventScrapeFailed      = "scrape_failed"       // a metrics scrape failed
	EventScrapeRecovered   = "scrape_recovered"    // scraping works again
	EventHarnessCPU        = "harness_cpu"         // the harness's own CPU (detail)
	EventLoadDone          = "load_done"           // the load's last send
	EventPublishDone       = "publish_done"        // the publishers' last message
	EventDrained           = "drained"             // the mempools drained (or the grace passed)
	EventTestnetDown       = "testnet_down"        // every process stopped
)
