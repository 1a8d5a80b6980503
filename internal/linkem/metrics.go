package linkem

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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

// WriteMetrics writes the counters and the lateness histogram in the
// Prometheus text format.
func (u *Userspace) WriteMetrics(w io.Writer) error {
	if err := WriteMetrics(w, u.Stats()); err != nil {
		return err
	}
	return WriteLatenessMetrics(w, u.Lateness())
}

// WriteLatenessMetrics renders a lateness histogram as a Prometheus
// histogram in seconds. It exposes one bucket per octave (1.024 µs … 17 s,
// bounds that are also bounds of the finer buckets kept in memory), which
// is plenty for rate() and histogram_quantile and keeps the file short.
func WriteLatenessMetrics(w io.Writer, l Lateness) error {
	const name = "benchnet_linkem_lateness_seconds"
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# HELP %s How late the userspace switch handed delayed frames to their destination, compared with their scheduled time.\n# TYPE %s histogram\n", name, name)
	var cum uint64
	for i := range LatBuckets - 1 {
		if i < len(l.Counts) {
			cum += l.Counts[i]
		}
		if i%latSub == 0 {
			fmt.Fprintf(bw, "%s_bucket{le=%q} %d\n", name, promFloat(float64(LatUpper(i))/1e9), cum)
		}
	}
	if len(l.Counts) == LatBuckets {
		cum += l.Counts[LatBuckets-1]
	}
	fmt.Fprintf(bw, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, cum, name, promFloat(l.Sum.Seconds()), name, cum)
	const mx = "benchnet_linkem_lateness_max_seconds"
	fmt.Fprintf(bw, "# HELP %s Largest lateness of a delayed frame since the switch started.\n# TYPE %s gauge\n%s %s\n", mx, mx, mx, promFloat(l.Max.Seconds()))
	return bw.Flush()
}

// WriteMetrics renders port counters in the Prometheus text format, one
// family per counter, labelled by port (the node name).
func WriteMetrics(w io.Writer, stats []PortStats) error {
	fams := []struct {
		name, help string
		get        func(PortStats) uint64
	}{
		{"benchnet_linkem_sent_packets_total", "Frames the node sent into the userspace switch.", func(s PortStats) uint64 { return s.SentPackets }},
		{"benchnet_linkem_sent_bytes_total", "Bytes (Ethernet frames) the node sent into the userspace switch.", func(s PortStats) uint64 { return s.SentBytes }},
		{"benchnet_linkem_forwarded_packets_total", "Copies of the node's frames delivered to other ports.", func(s PortStats) uint64 { return s.ForwardedPackets }},
		{"benchnet_linkem_forwarded_bytes_total", "Bytes of the node's frames delivered to other ports.", func(s PortStats) uint64 { return s.ForwardedBytes }},
		{"benchnet_linkem_dropped_loss_packets_total", "Copies of the node's frames dropped by emulated link loss.", func(s PortStats) uint64 { return s.DroppedLoss }},
		{"benchnet_linkem_dropped_queue_packets_total", "Frames of the node dropped by its full egress queue.", func(s PortStats) uint64 { return s.DroppedQueue }},
		{"benchnet_linkem_received_packets_total", "Frames delivered to the node.", func(s PortStats) uint64 { return s.ReceivedPackets }},
		{"benchnet_linkem_received_bytes_total", "Bytes delivered to the node.", func(s PortStats) uint64 { return s.ReceivedBytes }},
		{"benchnet_linkem_read_errors_total", "Failed reads from the node's TAP.", func(s PortStats) uint64 { return s.ReadErrors }},
		{"benchnet_linkem_write_errors_total", "Failed writes to the node's TAP (e.g. device down).", func(s PortStats) uint64 { return s.WriteErrors }},
	}
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s counter\n", f.name, f.help, f.name)
		for _, s := range stats {
			fmt.Fprintf(bw, "%s{port=%s} %d\n", f.name, strconv.Quote(s.Port), f.get(s))
		}
	}
	return bw.Flush()
}

// WriteMetricsFile writes the counters to path atomically (temp file and
// rename), e.g. into the run directory's metrics/ for a textfile collector.
func (u *Userspace) WriteMetricsFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".linkem-*.prom")
	if err != nil {
		return fmt.Errorf("linkem metrics: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600; the run directory's files are world-readable
		tmp.Close()
		return fmt.Errorf("linkem metrics: %w", err)
	}
	if err := u.WriteMetrics(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("linkem metrics: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("linkem metrics: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("linkem metrics: %w", err)
	}
	return nil
}
