package nfq_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/nfq"
)

// The agent backend's per-node tables read back, through the agent's own
// --link parser, as the model's conditions: every other node with a
// condition, by name.
func TestAgentsArgsParse(t *testing.T) {
	eps := []linkem.Endpoint{{Name: "a", Zone: "z0"}, {Name: "b", Zone: "z1"}, {Name: "c", Zone: "z0"}}
	m, err := linkem.New(eps, nil, func(x, y linkem.Endpoint) linkem.Link {
		if x.Zone == y.Zone {
			return linkem.Link{}
		}
		return linkem.Link{Delay: 42 * time.Millisecond, Jitter: 2100 * time.Microsecond, Loss: 0.015}
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetRate("a", 10_000_000); err != nil {
		t.Fatal(err)
	}
	be := linkem.NewAgents(linkem.AgentsConfig{Capture: netip.MustParsePrefix("10.213.4.0/24")})
	defer be.Close()
	if err := be.Apply(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	args, err := be.Args("a")
	if err != nil {
		t.Fatal(err)
	}
	var links []nfq.Link
	var capture, rate string
	for i := 0; i < len(args); i += 2 {
		switch args[i] {
		case "--link":
			l, err := nfq.ParseLink(args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			links = append(links, l)
		case "--capture":
			capture = args[i+1]
		case "--rate":
			rate = args[i+1]
		}
	}
	want := nfq.Link{Name: "b", Host: "b", Delay: 42 * time.Millisecond, Jitter: 2100 * time.Microsecond, Loss: 0.015}
	if len(links) != 1 || links[0] != want {
		t.Errorf("links of a %+v, want only %+v (c is in a's zone: no condition)", links, want)
	}
	if capture != "10.213.4.0/24" || rate != "10mbit" {
		t.Errorf("capture %q rate %q", capture, rate)
	}
	// A running node's change goes to its agent's control port: with no
	// way to reach the agent, the change is refused (no change is not).
	if err := be.Apply(context.Background(), m); err != nil {
		t.Errorf("re-apply of the same conditions: %v", err)
	}
	if err := m.Partition([]string{"a"}, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if err := be.Apply(context.Background(), m); err == nil || !strings.Contains(err.Error(), "push links to a") {
		t.Errorf("a partition with no agent endpoint: %v", err)
	}
}
