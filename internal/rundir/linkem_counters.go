package rundir

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
				fmt.Fprintf(bw, "%s{port=%s} %d\n", f.name, strconv.Quote(c.Ports[i].Port), *f.field(&c.Ports[i]))
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
// it. Comments and blank lines are skipped, and so are samples of families
// it does not know (a newer switch's); a line that is not a sample, or a
// known sample with a bad label or value, is an error naming file:line.
// Ports come in the order they first appear.
func DecodeLinkemCounters(r io.Reader, name string) (*LinkemCounters, error) {
	if name == "" {
		name = LinkemCountersFile
	}
	c := &LinkemCounters{}
	port := map[string]int{}
	hist := func() *LinkemLatenessHist {
		if c.Lateness == nil {
			c.Lateness = &LinkemLatenessHist{}
		}
		return c.Lateness
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		metric, labels, value, err := splitPromSample(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		bad := func(what string) error {
			return fmt.Errorf("%s:%d: %s: bad %s in %q", name, n, metric, what, line)
		}
		switch metric {
		case linkemLatenessName + "_bucket":
			le, ok := promLabel(labels, "le")
			if !ok {
				return nil, bad("le label")
			}
			v, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
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
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, bad("value")
			}
			hist().SumSeconds = v
		case linkemLatenessName + "_count":
			v, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return nil, bad("value")
			}
			hist().Count = v
		case linkemLatenessMax:
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, bad("value")
			}
			hist().MaxSeconds = v
		default:
			i := linkemCounterFam(metric)
			if i < 0 {
				continue
			}
			p, ok := promLabel(labels, "port")
			if !ok {
				return nil, bad("port label")
			}
			v, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return nil, bad("value")
			}
			j, seen := port[p]
			if !seen {
				j = len(c.Ports)
				port[p] = j
				c.Ports = append(c.Ports, LinkemPortCounters{Port: p})
			}
			*linkemCounterFams[i].field(&c.Ports[j]) = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return c, nil
}

func linkemCounterFam(metric string) int {
	for i, f := range linkemCounterFams {
		if f.name == metric {
			return i
		}
	}
	return -1
}

// splitPromSample splits `name{labels} value` (or `name value`); labels is
// the text between the braces.
func splitPromSample(line string) (name, labels, value string, err error) {
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", "", "", fmt.Errorf("unclosed labels in %q", line)
		}
		name, labels, value = line[:i], line[i+1:j], strings.TrimSpace(line[j+1:])
	} else {
		f := strings.Fields(line)
		if len(f) < 2 {
			return "", "", "", fmt.Errorf("not a sample: %q", line)
		}
		name, value = f[0], f[1]
	}
	if f := strings.Fields(value); len(f) > 0 {
		value = f[0] // a timestamp may follow
	}
	if name == "" || value == "" {
		return "", "", "", fmt.Errorf("not a sample: %q", line)
	}
	return name, labels, value, nil
}

// promLabel returns the value of label key in a label list as the
// encoders above write it (Go-quoted values, comma-separated).
func promLabel(labels, key string) (string, bool) {
	rest := labels
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return "", false
		}
		k := strings.TrimSpace(rest[:eq])
		q, err := strconv.QuotedPrefix(rest[eq+1:])
		if err != nil {
			return "", false
		}
		rest = strings.TrimPrefix(strings.TrimSpace(rest[eq+1+len(q):]), ",")
		if k == key {
			v, err := strconv.Unquote(q)
			return v, err == nil
		}
	}
	return "", false
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
			out = append(out, fmt.Sprintf("%s{port=%s} %d", f.name, strconv.Quote(c.Ports[i].Port), *f.field(&c.Ports[i])))
		}
	}
	return out
}
