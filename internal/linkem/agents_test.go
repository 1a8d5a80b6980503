package linkem

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeAgent serves a lateness line and counters as `linkem-agent` does;
// frames is how many delayed frames it reports, each 100 µs late.
type fakeAgent struct {
	frames atomic.Uint64
	srv    *httptest.Server
}

func newFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h LatHist
		for range f.frames.Load() {
			h.Observe(100_000)
		}
		if r.URL.Path == "/lateness" {
			s := SampleOf(time.Now(), h.Snapshot(), h.TakeIntervalMax(), int64(50*time.Millisecond), "SCHED_OTHER nice 0")
			_ = json.NewEncoder(w).Encode(&s)
			return
		}
		n := f.frames.Load()
		_ = rundir.EncodeLinkemCounters(w, CountersOf([]PortStats{{Port: "b", SentPackets: n, ForwardedPackets: n}, {Port: "other"}}, h.Snapshot()))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// The agent backend merges every agent's record into the run's: the
// histograms summed (an agent restarted with its node keeps what it had),
// the counters one port per node and destination; CheckLateness reads it.
func TestAgentsRecord(t *testing.T) {
	a, b := newFakeAgent(t), newFakeAgent(t)
	eps := map[string]string{"a": strings.TrimPrefix(a.srv.URL, "http://"), "b": strings.TrimPrefix(b.srv.URL, "http://")}
	m, err := New([]Endpoint{{Name: "a"}, {Name: "b"}}, nil, func(_, _ Endpoint) Link { return Link{Delay: 50 * time.Millisecond} }, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	be := NewAgents(AgentsConfig{RecordDir: dir, RecordEvery: time.Hour, Capture: netip.MustParsePrefix("10.0.0.0/24"),
		Endpoint: func(n string) string { return eps[n] }})
	if err := be.Apply(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	a.frames.Store(300)
	b.frames.Store(200)
	be.scrape()
	a.frames.Store(50) // a restarted: 300 before, 50 since
	be.scrape()
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	series, _, err := rundir.LinkemLatenessSeries.ReadFile(filepath.Join(dir, rundir.LinkemLatenessSeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	last := series[len(series)-1]
	if last.Frames != 550 {
		t.Errorf("merged frames %d, want 550 (a 300 + 50 after its restart, b 200)", last.Frames)
	}
	c := CheckLateness(series, time.Time{}, time.Time{}, "whole record")
	if !c.Met || c.Frames != 550 || c.SmallestDelayMs != 50 || c.BoundMs != 1 {
		t.Errorf("check: %+v", c)
	}
	got, err := rundir.DecodeLinkemCounters(mustOpen(t, filepath.Join(dir, rundir.LinkemCountersFile)), "counters.prom")
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]uint64{}
	for _, p := range got.Ports {
		ports[p.Port] = p.SentPackets
	}
	// The agents held arriving packets (no node has an egress rate): a's
	// link "b" carried b's traffic to a.
	if ports["b>a"] != 350 || ports["b>b"] != 200 {
		t.Errorf("ports %v, want b>a 350 (across the restart), b>b 200", ports)
	}
}

// Each agent holds arriving packets by their source's link (the model's
// j→i for node i), unless a node has an egress rate, which only the sender
// sees: then every agent keeps its egress, links i→j and the node's rate.
func TestAgentArgsDirection(t *testing.T) {
	delay := map[[2]string]time.Duration{{"a", "b"}: 10 * time.Millisecond, {"b", "a"}: 30 * time.Millisecond}
	for _, tc := range []struct {
		name string
		rate uint64
		want []string
	}{
		{"ingress", 0, []string{"--capture", "10.0.0.0/24", "--seed", "1", "--ingress", "--link", "b=b,delay=30ms"}},
		{"egress with a rate", 10_000_000, []string{"--capture", "10.0.0.0/24", "--seed", "1", "--rate", "10mbit", "--link", "b=b,delay=10ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New([]Endpoint{{Name: "a", Rate: tc.rate}, {Name: "b"}}, nil, func(x, y Endpoint) Link { return Link{Delay: delay[[2]string{x.Name, y.Name}]} }, 1)
			if err != nil {
				t.Fatal(err)
			}
			be := NewAgents(AgentsConfig{Capture: netip.MustParsePrefix("10.0.0.0/24")})
			if err := be.Apply(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			got, err := be.Args("a")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("args of a:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func mustOpen(t *testing.T, path string) *strings.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReader(string(b))
}
