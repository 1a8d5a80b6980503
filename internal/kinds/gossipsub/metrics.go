package gossipsub

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// ServedFamilies are the metric families a host serves on its metrics port.
// go-libp2p registers ~450 series per host (resource-manager, identify and
// dial histograms, per-subscriber event-bus gauges); the harness scrapes
// all 95 hosts on the same second, and parsing those expositions stalled
// the publisher at 10 msg/s (lag p99 113-450 ms, the late publishes on
// whole seconds). The deliveries come from the traces and CPU/RSS from
// /proc, so a host serves only what says whether it is healthy: process
// and runtime vitals, connection counts, trace drops.
var ServedFamilies = map[string]bool{
	"process_cpu_seconds_total":               true,
	"process_resident_memory_bytes":           true,
	"process_open_fds":                        true,
	"process_network_receive_bytes_total":     true,
	"process_network_transmit_bytes_total":    true,
	"go_goroutines":                           true,
	"go_threads":                              true,
	"go_memstats_heap_inuse_bytes":            true,
	"libp2p_swarm_connections_opened_total":   true,
	"libp2p_swarm_connections_closed_total":   true,
	"libp2p_swarm_dial_errors_total":          true,
	"benchnet_gossip_trace_dropped_total":     true,
	"benchnet_gossip_trace_events_total":      true,
	"benchnet_gossip_published_total":         true,
	"benchnet_gossip_planned_peers":           true,
	"benchnet_gossip_planned_peers_connected": true,
}

// servedGatherer is g with only ServedFamilies: the registry keeps
// everything go-libp2p registers (its collectors are cheap to update), the
// exposition carries the few families above.
func servedGatherer(g prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		out := mfs[:0]
		for _, mf := range mfs {
			if ServedFamilies[mf.GetName()] {
				out = append(out, mf)
			}
		}
		return out, err
	})
}
