package testnet

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// p2pAt is a runner that places every node's P2P endpoint at one address.
type p2pAt struct {
	infra.Runner
	addr string
}

func (r p2pAt) Endpoints(string) (statefile.Endpoints, error) {
	return statefile.Endpoints{P2P: r.addr}, nil
}

// TestAwaitListening: the other nodes start once a seed's P2P port accepts
// connections, not before; a seed that never listens delays them by
// seedListenWait at most, and an address that cannot be dialled at all (not
// refused) is not waited for.
func TestAwaitListening(t *testing.T) {
	seed := []*plan.Node{{Name: "seed0", Role: "seed"}}
	newTestnet := func(addr string) *Testnet {
		return &Testnet{Runner: p2pAt{addr: addr}, Dir: &rundir.Dir{Path: t.TempDir()}, log: io.Discard}
	}
	// A port that refuses until a listener opens on it 300 ms later.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		time.Sleep(300 * time.Millisecond)
		if l2, err := net.Listen("tcp", addr); err == nil {
			defer l2.Close()
			if c, err := l2.Accept(); err == nil {
				c.Close()
			}
		}
	}()
	tn := newTestnet(addr)
	start := time.Now()
	tn.awaitListening(context.Background(), seed)
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %s for a seed listening after 300 ms", d)
	}
	if ev, _ := os.ReadFile(tn.Dir.Join(rundir.Events)); !strings.Contains(string(ev), `"seed_listening"`) {
		t.Errorf("no seed_listening event: %s", ev)
	}

	// Never listening: bounded by seedListenWait. (The listener above must
	// be gone first, or this dial is accepted and nothing is waited for.)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the late listener never accepted the harness's dial")
	}
	old := seedListenWait
	seedListenWait = 200 * time.Millisecond
	t.Cleanup(func() { seedListenWait = old })
	start = time.Now()
	newTestnet(addr).awaitListening(context.Background(), seed)
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("waited %s for a seed that never listens, want about %s", d, seedListenWait)
	}
	// Not dialable (no such host): no wait.
	start = time.Now()
	newTestnet("seed0.invalid:26656").awaitListening(context.Background(), seed)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waited %s for an address the harness cannot dial", d)
	}
}
