package nfq_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/nfq"
)

// TestAgentControl changes a running agent's table through its control
// port in real namespaces: a 0 ms link to b, then a cut (100 % loss: no
// echo passes), then a 40 ms link, measured back within the lateness bound
// TestAgentEmulates uses.
func TestAgentControl(t *testing.T) {
	needNFQ(t)
	l := newLab(t)
	echo(t, l.b, addrB)
	probe(t, l.a, addrB, 1, time.Millisecond) // ARP first
	a := startAgent(t, l.a, []nfq.Link{{Name: "b", Prefix: netip.MustParsePrefix(addrB + "/32")}})
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	put := func(body string) {
		t.Helper()
		status, reply := nfq.DoLinks(t, srv, http.MethodPut, body)
		if status != http.StatusOK {
			t.Fatalf("PUT /links %s: %d: %s", body, status, reply)
		}
		t.Logf("PUT /links → %s", reply)
	}

	r0 := probe(t, l.a, addrB, 100, 5*time.Millisecond)
	t.Logf("0 ms link: %d/%d, rtt min %v median %v max %v", r0.received, r0.sent, r0.min, r0.med, r0.max)
	if r0.received != r0.sent {
		t.Errorf("0 ms link lost echoes: %d/%d", r0.received, r0.sent)
	}

	put(`{"links":["b=` + addrB + `,loss=100%"]}`)
	r1 := probe(t, l.a, addrB, 100, 5*time.Millisecond)
	t.Logf("cut: %d/%d echoes passed", r1.received, r1.sent)
	if r1.received != 0 {
		t.Errorf("%d of %d echoes passed a cut link", r1.received, r1.sent)
	}
	if p := port(a, "b"); p.DroppedLoss < 100 {
		t.Errorf("port b during the cut: %+v, want ≥ 100 dropped by loss", p)
	}

	const delay = 40 * time.Millisecond
	put(`{"links":["b=` + addrB + `,delay=40ms"]}`)
	before := a.Lateness()
	r2 := probe(t, l.a, addrB, 200, 5*time.Millisecond)
	late := a.Lateness().Sub(before)
	bound := linkem.LatenessBound(a.MinDelay())
	t.Logf("40 ms link: %d/%d, rtt min %v median %v max %v; agent lateness p50 %v p99 %v (bound %v)",
		r2.received, r2.sent, r2.min, r2.med, r2.max, late.Quantile(0.5), late.Quantile(0.99), bound)
	if late.Quantile(0.99) > bound {
		t.Skipf("invalid trial: the agent reports its lateness p99 %v over its bound %v (machine too loaded)", late.Quantile(0.99), bound)
	}
	if r2.received != r2.sent {
		t.Errorf("40 ms link lost echoes: %d/%d", r2.received, r2.sent)
	}
	if r2.min < delay {
		t.Errorf("min RTT %v < the new link's delay %v", r2.min, delay)
	}
	if extra := r2.med - delay - r0.med; extra > bound {
		t.Errorf("median RTT %v exceeds delay %v + the 0 ms link's %v by %v > lateness bound %v", r2.med, delay, r0.med, extra, bound)
	}
	if p := port(a, "b"); p.SentPackets < 400 || p.ForwardedPackets+p.DroppedLoss != p.SentPackets {
		t.Errorf("port b's counters across the three tables: %+v", p)
	}
}

func port(a *nfq.Agent, name string) linkem.PortStats {
	for _, p := range a.Stats() {
		if p.Port == name {
			return p
		}
	}
	return linkem.PortStats{}
}
