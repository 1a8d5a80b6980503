package nfq_test

import (
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem/nfq"
)

const addrA = "10.77.1.1" // namespace a's address towards b

// startAgentWith starts an agent of cfg (queue, realtime) in namespace ns
// with its rules (Ingress as cfg's), both removed at cleanup.
func startAgentWith(t testing.TB, ns string, cfg nfq.Config) (*nfq.Agent, nfq.Rules) {
	t.Helper()
	cfg.Conn.Netns, cfg.Realtime = ns, true
	a, err := nfq.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close agent: %v", err)
		}
	})
	r, err := nfq.Rules{Queue: cfg.Queue, Prefixes: a.Prefixes(), Netns: ns, Ingress: cfg.Ingress}.Install(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Remove(context.Background()); err != nil {
			t.Errorf("remove rules: %v", err)
		}
	})
	return a, r
}

// tcpFlow sends from namespace a to b over one TCP connection for d and
// returns the connect time (a round trip) and the bytes b received.
func tcpFlow(t *testing.T, l *lab, d time.Duration) (time.Duration, int64) {
	t.Helper()
	var ln net.Listener
	inNetns(t, l.b, func() {
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort(addrB, "7008")); err != nil {
			t.Errorf("listen: %v", err)
		}
	})
	if ln == nil {
		t.FailNow()
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var conn net.Conn
	var rtt time.Duration
	inNetns(t, l.a, func() {
		start := time.Now()
		var err error
		if conn, err = net.DialTimeout("tcp", net.JoinHostPort(addrB, "7008"), 5*time.Second); err != nil {
			t.Errorf("dial: %v", err)
		}
		rtt = time.Since(start)
	})
	if conn == nil {
		t.FailNow()
	}
	buf := make([]byte, 64<<10)
	_ = conn.SetWriteDeadline(time.Now().Add(d))
	for {
		if _, err := conn.Write(buf); err != nil {
			break // the deadline
		}
	}
	conn.Close()
	select {
	case n := <-got:
		return rtt, n
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver did not finish")
		return 0, 0
	}
}

// TestIngressKeepsTCP: a delay held on the sender's egress caps a TCP
// flow (TCP Small Queues: the held packets still count against their
// socket), the same delay held on arrival does not (nfq.Config.Ingress).
// Both emulate the same round trip. Measured here: 0.22 MB/s against
// 22 MB/s at 60 ms (veth namespaces, 2026-12-01).
func TestIngressKeepsTCP(t *testing.T) {
	needNFQ(t)
	const delay = 40 * time.Millisecond
	const window = 2 * time.Second
	rates := map[bool]float64{}
	for _, ingress := range []bool{false, true} {
		l := newLab(t)
		ns, peer := l.a, netip.MustParsePrefix(addrB+"/32")
		if ingress {
			ns, peer = l.b, netip.MustParsePrefix(addrA+"/32")
		}
		_, _ = startAgentWith(t, ns, nfq.Config{Links: []nfq.Link{{Name: "peer", Prefix: peer, Delay: delay}}, Seed: 1, Ingress: ingress})
		rtt, n := tcpFlow(t, l, window)
		rates[ingress] = float64(n) / window.Seconds() / 1e6
		t.Logf("ingress %v: connect %s, %.2f MB/s", ingress, rtt.Round(100*time.Microsecond), rates[ingress])
		if rtt < delay || rtt > delay+40*time.Millisecond {
			t.Errorf("ingress %v: connect took %s, want the emulated round trip ~%s", ingress, rtt, delay)
		}
	}
	if rates[true] < 2 || rates[true] < 5*rates[false] {
		t.Errorf("a TCP flow through a %s delay moved %.2f MB/s on arrival and %.2f on egress: want >= 2 and >= 5x egress", delay, rates[true], rates[false])
	}
}
