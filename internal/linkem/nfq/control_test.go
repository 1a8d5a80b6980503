package nfq

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
)

// DoLinks sends body to the control port's /links with method and returns
// the status and the trimmed reply (also for nfq_test).
func DoLinks(t testing.TB, srv *httptest.Server, method, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/links", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// controlAgent is an agent with its first table and no queue: what the
// control port changes, without the kernel.
func controlAgent(t *testing.T, capture ...string) *Agent {
	t.Helper()
	cfg := Config{Links: []Link{
		{Name: "b", Prefix: netip.MustParsePrefix("10.77.1.2/32"), Delay: 50 * time.Millisecond},
		{Name: "c", Prefix: netip.MustParsePrefix("10.77.2.0/24")},
	}}
	for _, c := range capture {
		cfg.Capture = append(cfg.Capture, netip.MustParsePrefix(c))
	}
	a, err := newAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.cancel)
	return a
}

func v4(s string) []byte {
	p := make([]byte, 20)
	p[0] = 0x45
	b := netip.MustParseAddr(s).As4()
	copy(p[16:], b[:])
	return p
}

// TestControlPut checks what PUT /links accepts, what it refuses and
// with which status, and that a refused table leaves the old one in force.
func TestControlPut(t *testing.T) {
	const before = `{"links":["b=10.77.1.2/32,delay=50ms","c=10.77.2.0/24"]}`
	for _, tc := range []struct {
		name, method, body string
		capture            []string
		status             int
		want               string // the reply's body (200) or a fragment of the refusal
	}{
		{"a cut and a new delay", "PUT", `{"links":["b=10.77.1.2,loss=100%","c3=10.77.2.3,delay=40ms"]}`, nil,
			200, `{"links":["b=10.77.1.2/32,loss=100%","c3=10.77.2.3/32,delay=40ms"]}`},
		{"rate", "PUT", `{"links":[],"rate":"10mbit"}`, nil, 200, `{"links":[],"rate":"10mbit"}`},
		{"heal: nothing conditioned", "PUT", `{"links":[]}`, nil, 200, `{"links":[]}`},
		{"host by capture", "PUT", `{"links":["lh=localhost,loss=100%"]}`, []string{"127.0.0.0/8"}, 200, `{"links":["lh=localhost,loss=100%"]}`},
		{"get", "GET", "", nil, 200, before},
		{"not json", "PUT", `links: b`, nil, 400, "want {"},
		{"unknown field", "PUT", `{"links":[],"lnks":[]}`, nil, 400, `unknown field "lnks"`},
		{"no links", "PUT", `{"rate":"1mbit"}`, nil, 400, `no "links"`},
		{"two tables", "PUT", `{"links":[]} {"links":[]}`, nil, 400, "one table per request"},
		{"bad key", "PUT", `{"links":["b=10.77.1.2,dealy=5ms"]}`, nil, 400, `unknown key "dealy"`},
		{"loss over 100 %", "PUT", `{"links":["b=10.77.1.2,loss=150%"]}`, nil, 400, "150%"},
		{"bad rate", "PUT", `{"links":[],"rate":"fast"}`, nil, 400, `rate "fast"`},
		{"not queued", "PUT", `{"links":["d=10.99.0.1,delay=5ms"]}`, nil, 422, "not queued by the agent's rules"},
		{"wider than queued", "PUT", `{"links":["c=10.77.0.0/16,delay=5ms"]}`, nil, 422, "not queued"},
		{"host without capture", "PUT", `{"links":["x=x,loss=100%"]}`, nil, 422, "capture"},
		{"name twice", "PUT", `{"links":["b=10.77.1.2,delay=1ms","b=10.77.2.3,delay=2ms"]}`, nil, 422, `"b" twice`},
		{"method", "POST", `{"links":[]}`, nil, 405, "GET or PUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := controlAgent(t, tc.capture...)
			srv := httptest.NewServer(a.Handler())
			defer srv.Close()
			status, got := DoLinks(t, srv, tc.method, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, got)
			}
			if tc.status == 200 {
				if got != tc.want {
					t.Errorf("reply %s, want %s", got, tc.want)
				}
				if w := mustJSON(t, a.Table().Wire()); w != tc.want {
					t.Errorf("in force %s, want %s", w, tc.want)
				}
				return
			}
			if !strings.Contains(got, tc.want) || !strings.HasPrefix(got, "linkem-agent: ") {
				t.Errorf("refusal %q, want it to say %q", got, tc.want)
			}
			if w := mustJSON(t, a.Table().Wire()); w != before {
				t.Errorf("a refused table changed the one in force: %s", w)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSetTableSwaps checks that a new table classifies the next packets,
// host links new to the agent resolve before it takes effect, and every
// port's counters outlive the table that named it.
func TestSetTableSwaps(t *testing.T) {
	a := controlAgent(t, "127.0.0.0/8")
	a.tab.Load().links[0].sent.Add(7) // b's (the /32 sorts first)
	cut, err := ParseTable(linkem.AgentTable{Links: []string{"lh=localhost,loss=100%", "c=10.77.2.0/24,delay=40ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetTable(t.Context(), cut); err != nil {
		t.Fatal(err)
	}
	tab := a.tab.Load()
	for _, tc := range []struct {
		dst, port string
		loss      float64
		delay     time.Duration
	}{
		{"127.0.0.1", "lh", 1, 0}, // resolved before the swap
		{"10.77.2.9", "c", 0, 40 * time.Millisecond},
		{"10.77.1.2", otherPort, 0, 0}, // b is no longer conditioned
	} {
		l := a.classify(tab, v4(tc.dst))
		if l.Name != tc.port || l.Loss != tc.loss || l.Delay != tc.delay {
			t.Errorf("%s: link %s loss %g delay %v, want %s loss %g delay %v", tc.dst, l.Name, l.Loss, l.Delay, tc.port, tc.loss, tc.delay)
		}
	}
	var names []string
	for _, p := range a.Stats() {
		names = append(names, p.Port)
		if p.Port == "b" && p.SentPackets != 7 {
			t.Errorf("b's counters restarted with the table: sent %d, want 7", p.SentPackets)
		}
	}
	if want := []string{"b", "c", "lh", otherPort}; !slices.Equal(names, want) {
		t.Errorf("ports %q, want %q", names, want)
	}
	if a.MinDelay() != 40*time.Millisecond {
		t.Errorf("MinDelay %v after the swap, want the new table's 40ms", a.MinDelay())
	}
}
