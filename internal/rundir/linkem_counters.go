package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/benchnet/benchnet/internal/promtext"
)

// LinkemCounters is linkem/counters.prom: the userspace switch's per-port
// counters and its lateness histogram, in the Prometheus text format (so a
// textfile collector can read it too). The switch rewrites it whole
// (temporary file and rename) while it runs and at the end.
type LinkemCounters struct {
	Ports []LinkemPortCounters
	// Lateness is nil in files written before the switch kept a histogram.
	Lateness *LinkemLatenessHist
}

// LinkemPortCounters are one port's counters. "Sent" counts what the node
// sent into the switch, "Received" what the switch delivered to the node.
type LinkemPortCounters struct {
	Port                             string
	SentPackets, SentBytes           uint64
	ForwardedPackets, ForwardedBytes uint64 // copies of sent frames delivered to other ports
	DroppedLoss, DroppedQueue        uint64 // sent frames dropped by link loss / egress queue
	ReceivedPackets, ReceivedBytes   uint64
	ReadErrors, WriteErrors          uint64
}

// LinkemLatenessHist is the lateness histogram as counters.prom exposes
// it: cumulative counts by upper bound in seconds (the +Inf bucket is
// Count), the sum in seconds, and the largest lateness as a gauge.
type LinkemLatenessHist struct {
	Buckets    []LinkemBucket
	SumSeconds float64
	Count      uint64
	MaxSeconds float64
}

// LinkemBucket is one bucket of LinkemLatenessHist.
type LinkemBucket struct {
	LE    float64 // upper bound, seconds
	Count uint64  // cumulative
}

const (
	linkemLatenessName = "benchnet_linkem_lateness_seconds"
	linkemLatenessMax  = "benchnet_linkem_lateness_max_seconds"
)

// linkemCounterFams are counters.prom's counter families, in file order.
var linkemCounterFams = []struct {
	name, help string
	field      func(*LinkemPortCounters) *uint64
}{
	{"benchnet_linkem_sent_packets_total", "Frames the node sent into the userspace switch.", func(s *LinkemPortCounters) *uint64 { return &s.SentPackets }},
	{"benchnet_linkem_sent_bytes_total", "Bytes (Ethernet frames) the node sent into the userspace switch.", func(s *LinkemPortCounters) *uint64 { return &s.SentBytes }},
	{"benchnet_linkem_forwarded_packets_total", "Copies of the node's frames delivered to other ports.", func(s *LinkemPortCounters) *uint64 { return &s.ForwardedPackets }},
	{"benchnet_linkem_forwarded_bytes_total", "Bytes of the node's frames delivered to other ports.", func(s *LinkemPortCounters) *uint64 { return &s.ForwardedBytes }},
	{"benchnet_linkem_dropped_loss_packets_total", "Copies of the node's frames dropped by emulated link loss.", func(s *LinkemPortCounters) *uint64 { return &s.DroppedLoss }},
	{"benchnet_linkem_dropped_queue_packets_total", "Frames of the node dropped by its full egress queue.", func(s *LinkemPortCounters) *uint64 { return &s.DroppedQueue }},
	{"benchnet_linkem_received_packets_total", "Frames delivered to the node.", func(s *LinkemPortCounters) *uint64 { return &s.ReceivedPackets }},
	{"benchnet_linkem_received_bytes_total", "Bytes delivered to the node.", func(s *LinkemPortCounters) *uint64 { return &s.ReceivedBytes }},
	{"benchnet_linkem_read_errors_total", "Failed reads from the node's TAP.", func(s *LinkemPortCounters) *uint64 { return &s.ReadErrors }},
	{"benchnet_linkem_write_errors_total", "Failed writes to the node's TAP (e.g. device down).", func(s *LinkemPortCounters) *uint64 { return &s.WriteErrors }},
}

// promFloat renders v in Prometheus's text format.
func promFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// EncodeLinkemCounters writes c in the Prometheus text format: one counter
// family per port counter, labelled by port (none when there are no ports),
// then the lateness histogram and its max gauge when c has them.
func EncodeLinkemCounters(w io.Writer, c *LinkemCounters) error {
	bw := bufio.NewWriter(w)
	if len(c.Ports) > 0 {
		for _, f := range linkemCounterFams {
			fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s counter\n", f.name, f.help, f.name)
			for i := range c.Ports {
				fmt.Fprintf(bw, "%s{%s} %d\n", f.name, promtext.Label("port", c.Ports[i].Port), *f.field(&c.Ports[i]))
			}
		}
	}
	if h := c.Lateness; h != nil {
		const name = linkemLatenessName
		fmt.Fprintf(bw, "# HELP %s How late the userspace switch handed delayed frames to their destination, compared with their scheduled time.\n# TYPE %s histogram\n", name, name)
		for _, b := range h.Buckets {
			fmt.Fprintf(bw, "%s_bucket{le=%q} %d\n", name, promFloat(b.LE), b.Count)
		}
		fmt.Fprintf(bw, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, h.Count, name, promFloat(h.SumSeconds), name, h.Count)
		const mx = linkemLatenessMax
		fmt.Fprintf(bw, "# HELP %s Largest lateness of a delayed frame since the switch started.\n# TYPE %s gauge\n%s %s\n", mx, mx, mx, promFloat(h.MaxSeconds))
	}
	return bw.Flush()
}

// DecodeLinkemCounters reads counters.prom as EncodeLinkemCounters writes
// it, through the one exposition parser the scrapes use (promtext).
// Comments and blank lines are skipped, and so are samples of families it
// does not know (a newer switch's); a line that does not parse, or a known
// sample with a bad label or value, is an error naming file:line. Ports
// come in the order they first appear.
func DecodeLinkemCounters(r io.Reader, name string) (*LinkemCounters, error) {
	if name == "" {
		name = LinkemCountersFile
	}
	var p promtext.Parser
	if err := p.Parse(r); err != nil {
		var pe *promtext.Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %w", name, pe.Line, pe.Err)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	// The parser sorts by name and labels; the file's order is the ports'.
	samples := p.Samples // the parser is this call's own: sorted in place
	slices.SortStableFunc(samples, func(a, b promtext.Sample) int { return a.Line - b.Line })
	c := &LinkemCounters{}
	port := map[string]int{}
	hist := func() *LinkemLatenessHist {
		if c.Lateness == nil {
			c.Lateness = &LinkemLatenessHist{}
		}
		return c.Lateness
	}
	for _, s := range samples {
		bad := func(what string) error {
			return fmt.Errorf("%s:%d: %s: bad %s in %s%s %s", name, s.Line, s.Name, what, s.Name, s.Labels, promFloat(s.Value))
		}
		label := func(key string) (string, bool) {
			m, err := promtext.ParseLabels(s.Labels)
			v, ok := m[key]
			return v, err == nil && ok
		}
		switch s.Name {
		case linkemLatenessName + "_bucket":
			le, ok := label("le")
			if !ok {
				return nil, bad("le label")
			}
			v, ok := promCount(s.Value)
			if !ok {
				return nil, bad("count")
			}
			if le == "+Inf" {
				continue // the same as _count
			}
			b, err := strconv.ParseFloat(le, 64)
			if err != nil || math.IsInf(b, 0) {
				return nil, bad("le label")
			}
			h := hist()
			h.Buckets = append(h.Buckets, LinkemBucket{LE: b, Count: v})
		case linkemLatenessName + "_sum":
			hist().SumSeconds = s.Value
		case linkemLatenessName + "_count":
			v, ok := promCount(s.Value)
			if !ok {
				return nil, bad("value")
			}
			hist().Count = v
		case linkemLatenessMax:
			hist().MaxSeconds = s.Value
		default:
			i := linkemCounterFam(s.Name)
			if i < 0 {
				continue
			}
			pn, ok := label("port")
			if !ok {
				return nil, bad("port label")
			}
			v, ok := promCount(s.Value)
			if !ok {
				return nil, bad("value")
			}
			j, seen := port[pn]
			if !seen {
				j = len(c.Ports)
				port[pn] = j
				c.Ports = append(c.Ports, LinkemPortCounters{Port: pn})
			}
			*linkemCounterFams[i].field(&c.Ports[j]) = v
		}
	}
	return c, nil
}

// promCount is a counter's sample value as a count: a whole number from 0
// to 2^64 (exact to 2^53, far beyond a run's frames and bytes).
func promCount(v float64) (uint64, bool) {
	if !(v >= 0 && v < 1<<64) || v != math.Trunc(v) {
		return 0, false
	}
	return uint64(v), true
}

func linkemCounterFam(metric string) int {
	for i, f := range linkemCounterFams {
		if f.name == metric {
			return i
		}
	}
	return -1
}

// ReadLinkemCounters reads linkem/counters.prom of run directory d.
func (d *Dir) ReadLinkemCounters() (*LinkemCounters, error) {
	data, err := os.ReadFile(d.Join(LinkemDir, LinkemCountersFile))
	if err != nil {
		return nil, err
	}
	return DecodeLinkemCounters(bytes.NewReader(data), filepath.Join(LinkemDir, LinkemCountersFile))
}

// WriteLinkemCounters writes c to path atomically (temporary file and
// rename, readable by all), so a reader never sees half of it.
func WriteLinkemCounters(path string, c *LinkemCounters) error {
	var b bytes.Buffer
	if err := EncodeLinkemCounters(&b, c); err != nil {
		return err
	}
	return WriteAtomic(path, b.Bytes())
}

// CounterLines renders the port counters as sample lines, one per (counter,
// port), in file order.
func (c *LinkemCounters) CounterLines() []string {
	var out []string
	for _, f := range linkemCounterFams {
		for i := range c.Ports {
			out = append(out, fmt.Sprintf("%s{%s} %d", f.name, promtext.Label("port", c.Ports[i].Port), *f.field(&c.Ports[i])))
		}
	}
	return out
}
