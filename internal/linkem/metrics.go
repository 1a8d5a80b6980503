package linkem

import (
	"fmt"
	"io"

	"github.com/benchnet/benchnet/internal/rundir"
)

// PortStats are one port's counters. "Sent" counts what the node sent into
// the switch, "Received" what the switch delivered to the node.
type PortStats struct {
	Port, Tap                        string
	SentPackets, SentBytes           uint64
	ForwardedPackets, ForwardedBytes uint64 // copies of sent frames delivered to other ports
	DroppedLoss, DroppedQueue        uint64 // sent frames dropped by link loss / egress queue
	ReceivedPackets, ReceivedBytes   uint64
	ReadErrors, WriteErrors          uint64
}

// Stats returns every port's counters in port order.
func (u *Userspace) Stats() []PortStats {
	var out []PortStats
	for _, p := range *u.ports.Load() {
		out = append(out, PortStats{
			Port: p.name, Tap: p.tap,
			SentPackets: p.rxPackets.Load(), SentBytes: p.rxBytes.Load(),
			ForwardedPackets: p.fwdPackets.Load(), ForwardedBytes: p.fwdBytes.Load(),
			DroppedLoss: p.lossDrops.Load(), DroppedQueue: p.queueDrops.Load(),
			ReceivedPackets: p.txPackets.Load(), ReceivedBytes: p.txBytes.Load(),
			ReadErrors: p.readErrors.Load(), WriteErrors: p.writeError.Load(),
		})
	}
	return out
}

// Counters is the switch's counters.prom record (rundir.LinkemCounters):
// every port's counters and the lateness histogram.
func (u *Userspace) Counters() *rundir.LinkemCounters {
	return CountersOf(u.Stats(), u.Lateness())
}

// CountersOf is counters.prom's record of port counters and a lateness
// histogram: the switch's, or the NFQUEUE agent's (one port per
// destination link).
func CountersOf(stats []PortStats, l Lateness) *rundir.LinkemCounters {
	return &rundir.LinkemCounters{Ports: portCounters(stats), Lateness: latenessHist(l)}
}

// WriteMetrics writes the counters and the lateness histogram in the
// Prometheus text format (counters.prom's codec).
func (u *Userspace) WriteMetrics(w io.Writer) error {
	return rundir.EncodeLinkemCounters(w, u.Counters())
}

// WriteLatenessMetrics renders a lateness histogram alone as a Prometheus
// histogram in seconds (counters.prom's codec with no ports).
func WriteLatenessMetrics(w io.Writer, l Lateness) error {
	return rundir.EncodeLinkemCounters(w, &rundir.LinkemCounters{Lateness: latenessHist(l)})
}

// latenessHist is l as counters.prom exposes it: one bucket per octave
// (1.024 µs … 17 s, bounds that are also bounds of the finer buckets kept
// in memory), which is plenty for rate() and histogram_quantile and keeps
// the file short.
func latenessHist(l Lateness) *rundir.LinkemLatenessHist {
	h := &rundir.LinkemLatenessHist{SumSeconds: l.Sum.Seconds(), MaxSeconds: l.Max.Seconds()}
	var cum uint64
	for i := range LatBuckets - 1 {
		if i < len(l.Counts) {
			cum += l.Counts[i]
		}
		if i%latSub == 0 {
			h.Buckets = append(h.Buckets, rundir.LinkemBucket{LE: float64(LatUpper(i)) / 1e9, Count: cum})
		}
	}
	if len(l.Counts) == LatBuckets {
		cum += l.Counts[LatBuckets-1]
	}
	h.Count = cum
	return h
}

// WriteMetrics renders port counters alone in the Prometheus text format
// (counters.prom's codec with no histogram): one family per counter,
// labelled by port (the node name).
func WriteMetrics(w io.Writer, stats []PortStats) error {
	return rundir.EncodeLinkemCounters(w, &rundir.LinkemCounters{Ports: portCounters(stats)})
}

func portCounters(stats []PortStats) []rundir.LinkemPortCounters {
	out := make([]rundir.LinkemPortCounters, len(stats))
	for i, s := range stats {
		out[i] = rundir.LinkemPortCounters{
			Port: s.Port, SentPackets: s.SentPackets, SentBytes: s.SentBytes,
			ForwardedPackets: s.ForwardedPackets, ForwardedBytes: s.ForwardedBytes,
			DroppedLoss: s.DroppedLoss, DroppedQueue: s.DroppedQueue,
			ReceivedPackets: s.ReceivedPackets, ReceivedBytes: s.ReceivedBytes,
			ReadErrors: s.ReadErrors, WriteErrors: s.WriteErrors,
		}
	}
	return out
}

// WriteMetricsFile writes counters.prom to path atomically (temporary file
// and rename), e.g. into the run directory's linkem/ or a textfile
// collector's directory.
func (u *Userspace) WriteMetricsFile(path string) error {
	if err := rundir.WriteLinkemCounters(path, u.Counters()); err != nil {
		return fmt.Errorf("linkem metrics: %w", err)
	}
	return nil
}
