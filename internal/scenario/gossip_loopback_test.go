package scenario

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

func loopbackPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The publish workload and the gossip analysis over real hosts in this
// process, on loopback (no namespaces, no root): a line of 4 delivers every
// message to every host, the last one N-1 = 3 hops from the publisher.
func TestPublishOverLoopbackHosts(t *testing.T) {
	testenv.Integration(t) // real gossipsub hosts, on loopback
	const n, count = 4, 30
	m := gossipLine(t, "10.213.242.0/24", n, "rate = 50\ncount = 30\nsource = \"gossip0\"\nwarmup = \"1s\"\ncooldown = \"1s\"\n")
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, nd := range p.Nodes {
		nd.Addr = netip.MustParseAddr("127.0.0.1")
		nd.P2PPort, nd.RPCPort, nd.PrometheusPort = loopbackPort(t), loopbackPort(t), loopbackPort(t)
	}
	dir, err := rundir.Create(t.TempDir(), "loop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pj, _ := p.JSON()
	if err := dir.WriteFile(rundir.Plan, pj); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, n)
	for _, nd := range p.Nodes {
		cfg := gossipsub.HostConfig(p, nd, rundir.TraceFile(dir, nd.Name))
		go func() { done <- gossipsub.Run(ctx, cfg, io.Discard) }()
	}
	stop := func() {
		if cancel == nil {
			return
		}
		cancel()
		cancel = nil
		for i := 0; i < n; i++ {
			if err := <-done; err != nil {
				t.Errorf("host: %v", err)
			}
		}
	}
	defer stop()
	drv := &gossipsub.Driver{}
	for _, nd := range p.Nodes {
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			ok, status := drv.Ready(ctx, nd)
			if ok {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s: %s", nd.Name, status)
			}
		}
	}
	var log strings.Builder
	sum, err := Publish(ctx, dir, p, drv, &log, nil)
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, log.String())
	}
	if sum.OK != count || sum.Expected != count {
		t.Fatalf("publish summary %+v", sum)
	}
	stop()
	res, err := analysis.Run(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Gossip
	if g.Messages != count || g.Delivered != count*(n-1) || g.MDR != 1 {
		t.Errorf("messages %d delivered %d MDR %v, want %d, %d, 1 (missing %v)", g.Messages, g.Delivered, g.MDR, count, count*(n-1), g.Missing)
	}
	if g.LastDeliveryHop.Min != n-1 || g.LastDeliveryHop.Max != n-1 || g.MaxHop.Max != n-1 {
		t.Errorf("line of %d: last-delivery hop %+v, longest chain %+v, want %d", n, g.LastDeliveryHop, g.MaxHop, n-1)
	}
}
