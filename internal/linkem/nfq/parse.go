package nfq

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
)

// ParseLink parses one entry of the agent's link table, as the CLI takes
// it (--link):
//
//	[NAME=]ADDR|CIDR[,delay=50ms][,jitter=2ms][,loss=1%][,rate=10mbit][,queue=BYTES]
//
// The values have the manifest's syntaxes ([network] delay, loss,
// bandwidth; jitter is an absolute duration here, the model having
// resolved a percentage).
func ParseLink(s string) (Link, error) {
	fields := strings.Split(s, ",")
	var l Link
	dst := strings.TrimSpace(fields[0])
	if name, rest, ok := strings.Cut(dst, "="); ok {
		l.Name, dst = strings.TrimSpace(name), strings.TrimSpace(rest)
	}
	var err error
	if strings.Contains(dst, "/") {
		l.Prefix, err = netip.ParsePrefix(dst)
	} else {
		var a netip.Addr
		if a, err = netip.ParseAddr(dst); err == nil {
			l.Prefix = netip.PrefixFrom(a, a.BitLen())
		}
	}
	if err != nil {
		return Link{}, fmt.Errorf("link %q: destination %q: want an address or a CIDR", s, dst)
	}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return Link{}, fmt.Errorf("link %q: %q: want key=value", s, f)
		}
		switch k {
		case "delay":
			l.Delay, err = linkem.ParseDelay(v)
		case "jitter":
			l.Jitter, err = time.ParseDuration(v)
			if err == nil && l.Jitter < 0 {
				err = fmt.Errorf("jitter %q is negative", v)
			}
		case "loss":
			l.Loss, err = linkem.ParseLoss(v)
		case "rate":
			l.Rate, err = linkem.ParseRate(v)
		case "queue":
			_, err = fmt.Sscanf(v, "%d", &l.QueueBytes)
			if err == nil && l.QueueBytes <= 0 {
				err = fmt.Errorf("queue %q: want a positive number of bytes", v)
			}
		default:
			err = fmt.Errorf("unknown key %q (delay, jitter, loss, rate, queue)", k)
		}
		if err != nil {
			return Link{}, fmt.Errorf("link %q: %w", s, err)
		}
	}
	return l, nil
}

// String renders l in ParseLink's syntax.
func (l Link) String() string {
	var b strings.Builder
	if l.Name != "" {
		b.WriteString(l.Name + "=")
	}
	b.WriteString(l.Prefix.String())
	if l.Delay > 0 {
		fmt.Fprintf(&b, ",delay=%s", l.Delay)
	}
	if l.Jitter > 0 {
		fmt.Fprintf(&b, ",jitter=%s", l.Jitter)
	}
	if l.Loss > 0 {
		fmt.Fprintf(&b, ",loss=%g%%", l.Loss*100)
	}
	if l.Rate > 0 {
		b.WriteString(",rate=" + linkem.FormatRate(l.Rate))
	}
	if l.QueueBytes > 0 {
		fmt.Fprintf(&b, ",queue=%d", l.QueueBytes)
	}
	return b.String()
}
