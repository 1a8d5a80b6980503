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
//	[NAME=]ADDR|CIDR|HOST[,delay=50ms][,jitter=2ms][,loss=1%][,rate=10mbit][,queue=BYTES]
//
// A HOST (a DNS name, e.g. a swarm node's alias) is resolved by the agent,
// and needs a capture prefix (Config.Capture) to be queued at all.
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
	switch {
	case strings.Contains(dst, "/"):
		l.Prefix, err = netip.ParsePrefix(dst)
	case isHostName(dst):
		l.Host = dst
	default:
		var a netip.Addr
		if a, err = netip.ParseAddr(dst); err == nil {
			l.Prefix = netip.PrefixFrom(a, a.BitLen())
		}
	}
	if err != nil {
		return Link{}, fmt.Errorf("link %q: destination %q: want an address, a CIDR or a host name", s, dst)
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
	if l.Host != "" {
		b.WriteString(l.Host)
	} else {
		b.WriteString(l.Prefix.String())
	}
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

// isHostName reports whether s is a DNS name (letters, digits, '-', '.',
// '_'), and not an address: it has a letter, or a label starts with one.
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	letter := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			letter = true
		case c >= '0' && c <= '9', c == '-', c == '.':
		default:
			return false
		}
	}
	return letter && !strings.Contains(s, ":")
}
