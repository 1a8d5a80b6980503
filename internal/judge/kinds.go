package judge

// GossipMetrics are what a gossip comparison judges (the Whiteblock
// report's figures): each run's results.json gossip section gives the run
// value, its deliveries.csv the messages the bootstrap redraws.
var GossipMetrics = []Metric{
	{Key: "mdr", Name: "MDR", Unit: "%", Better: HigherIsBetter},
	{Key: "dissemination_avg", Name: "dissemination mean", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p50", Name: "dissemination p50", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p95", Name: "dissemination p95", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_p99", Name: "dissemination p99", Unit: "ms", Better: LowerIsBetter},
	{Key: "dissemination_max", Name: "dissemination max", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_avg", Name: "time to last delivery mean", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_p99", Name: "time to last delivery p99", Unit: "ms", Better: LowerIsBetter},
	{Key: "last_delivery_hop", Name: "last-delivery hop mean", Unit: "hops", Better: LowerIsBetter},
	{Key: "max_hop", Name: "max hop mean (Whiteblock's)", Unit: "hops", Better: LowerIsBetter},
	{Key: "duplicates", Name: "duplicates per delivery", Unit: "copies", Better: LowerIsBetter},
	{Key: "host_cpu_avg", Name: "host CPU avg", Unit: "% of a core", Better: LowerIsBetter},
	{Key: "host_cpu_max", Name: "host CPU max", Unit: "% of a core", Better: LowerIsBetter},
	{Key: "host_rss_max", Name: "host RSS max", Unit: "MiB", Better: LowerIsBetter},
}

// MetricsOf is the judged metrics of a node kind's runs ("cometbft",
// "gossipsub"; "" is cometbft, compare.json written before the kind was
// recorded); ok is false for a kind with none. Readers of records (the
// report) take the metrics' names, units and directions from here.
func MetricsOf(kind string) ([]Metric, bool) {
	switch kind {
	case "", "cometbft":
		return Metrics, true
	case "gossipsub":
		return GossipMetrics, true
	}
	return nil, false
}
