package collect

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// realExposition was scraped from a cometbft v1.0.1 kvstore node with
// instrumentation.prometheus = true after 5 txs.
const realExposition = "../promtext/testdata/cometbft-v1.0.1.prom"

func TestParseProc(t *testing.T) {
	// A real /proc/<pid>/stat line, with a command name holding ") (".
	stat := []byte("1234 (co) (x) S 1 1234 1234 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 100 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")
	cpu, err := parseProcStat(stat)
	if err != nil || cpu != 3.25 {
		t.Errorf("cpu = %v, %v; want 3.25 (325 ticks)", cpu, err)
	}
	if _, err := parseProcStat([]byte("1234 (x) S 1")); err == nil {
		t.Error("short stat parsed")
	}
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"Name:\tx\nVmRSS:\t  2048 kB\nThreads: 1\n", 2048 * 1024, false},
		{"Name:\tzombie\nState:\tZ\n", 0, false},
		{"VmRSS:\t  x kB\n", 0, true},
	} {
		got, err := parseVmRSS([]byte(c.in))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("parseVmRSS(%q) = %v, %v", c.in, got, err)
		}
	}
	busy, total, steal, irq, cpus, err := ParseStat([]byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1\n"))
	if err != nil || busy != 1.5 || total != 10 || steal != 0 || irq != 0 || cpus != 2 {
		t.Errorf("ParseStat = %v %v %v %v %v %v", busy, total, steal, irq, cpus, err)
	}
	// Steal (the 8th value) is busy time too, and reported alone.
	busy, total, steal, irq, _, err = ParseStat([]byte("cpu  100 0 50 600 50 60 40 100 0 0\n"))
	if err != nil || busy != 3.5 || total != 10 || steal != 1 || irq != 1 {
		t.Errorf("ParseStat with steal and irq = %v %v %v %v %v", busy, total, steal, irq, err)
	}
	// The live machine, as the collector sees it.
	p, err := ReadProc(os.Getpid())
	if err != nil || p.RSSBytes <= 0 {
		t.Errorf("ReadProc(self) = %+v, %v", p, err)
	}
	if _, err := ReadProc(1 << 30); err == nil {
		t.Error("ReadProc of a missing pid did not fail")
	}
	h, err := ReadHost()
	if err != nil || h.CPUs <= 0 || h.CPUTotalSeconds <= 0 {
		t.Errorf("ReadHost = %+v, %v", h, err)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestCollectorNodeDown runs the collector against a good node, a node whose
// exposition is malformed and a node that goes down mid-run: failures are
// recorded, the good node keeps being scraped, and every file reads back
// after cancel.
func TestCollectorNodeDown(t *testing.T) {
	expo, err := os.ReadFile(realExposition)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(body []byte) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	}
	good, dying, bad := serve(expo), serve(expo), serve([]byte("cometbft_x{a=\"1\" 1\n"))
	defer good.Close()
	defer bad.Close()
	dir, err := rundir.Create(t.TempDir(), "collect", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	self := func() int { return os.Getpid() }
	c := New(dir, []Target{
		{Node: "good", MetricsURL: good.URL + "/metrics", PID: self},
		{Node: "dying", MetricsURL: dying.URL + "/metrics"},
		{Node: "bad", MetricsURL: bad.URL + "/metrics", PID: func() int { return 1 << 30 }},
		{Node: "app", PID: func() int { return 0 }}, // not started: skipped silently
	}, 100*time.Millisecond)
	c.FlushEvery = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	time.Sleep(450 * time.Millisecond)
	dying.CloseClientConnections()
	dying.Close()
	// Before cancel, flushed files already hold data (an interrupted run keeps it).
	time.Sleep(450 * time.Millisecond)
	mid, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(dir))
	if err != nil {
		t.Fatalf("read samples mid-run: %v", err)
	}
	if len(mid) == 0 {
		t.Error("no samples readable mid-run")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	st := c.Stats()
	t.Logf("stats %+v", st)

	samples, truncated, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(dir))
	if truncated {
		t.Error("samples.csv.gz cut after a clean stop")
	}
	if err != nil {
		t.Fatalf("read samples after cancel: %v", err)
	}
	per := map[string]int{}
	for _, s := range samples {
		per[s.Node]++
	}
	var parsed promtext.Parser
	if err := parsed.Parse(bytes.NewReader(expo)); err != nil {
		t.Fatal(err)
	}
	nexp := len(parsed.Samples)
	if per["good"] < 6*nexp || per["good"]%nexp != 0 {
		t.Errorf("good node: %d rows, want a multiple of %d, >= 6 scrapes", per["good"], nexp)
	}
	if per["dying"] == 0 || per["dying"] >= per["good"] {
		t.Errorf("dying node: %d rows (good %d): want some, fewer than good", per["dying"], per["good"])
	}
	if per["bad"] != 0 {
		t.Errorf("malformed node wrote %d rows", per["bad"])
	}

	errs := readCSV(t, rundir.ScrapeErrorsCSV.Path(dir))
	byNode := map[string]int{}
	for _, r := range errs[1:] {
		byNode[r[1]+"/"+r[2]]++
	}
	if byNode["bad/metrics"] < 5 || byNode["dying/metrics"] < 2 || byNode["bad/proc"] < 5 || byNode["good/metrics"] != 0 {
		t.Errorf("scrape errors by node/source: %v", byNode)
	}
	for _, r := range errs[1:] {
		if r[1] == "bad" && r[2] == "metrics" && !strings.Contains(r[3], "parse exposition") {
			t.Errorf("malformed exposition error: %q", r[3])
		}
	}
	proc := readCSV(t, rundir.ProcCSV.Path(dir))
	pn := map[string]int{}
	for _, r := range proc[1:] {
		pn[r[1]]++
		// A node without a local pid (on another machine) gets its rows
		// from its own process metrics, pid 0.
		if r[1] == "dying" && (r[2] != "0" || r[3] != "41574400" || r[4] != "0.54") {
			t.Errorf("proc row of the pid-less node: %v, want pid 0 and the exposition's RSS and CPU", r)
		}
	}
	if pn["good"] < 6 || pn[rundir.HarnessNode] < 6 || pn["bad"] != 0 || pn["app"] != 0 || pn["dying"] < 2 || pn["dying"] >= pn["good"] {
		t.Errorf("proc rows per node: %v", pn)
	}
	if host := readCSV(t, rundir.HostCSV.Path(dir)); len(host) < 7 {
		t.Errorf("host.csv: %d rows", len(host))
	}
	if m, err := dir.ReadMachine(); err != nil || m.CPUs == 0 {
		t.Errorf("machine.json: %+v, %v", m, err)
	}
	evs, err := dir.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Kind+"/"+e.Node]++
	}
	// One event when a node starts failing, not one per failed scrape.
	if kinds["scrape_failed/dying"] != 1 || kinds["scrape_failed/bad"] != 2 { // metrics + proc
		t.Errorf("events: %v", kinds)
	}
}

// The scrape loops are spread evenly over the interval, the first at once.
func TestPhase(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		want time.Duration
	}{
		{0, 1, 0}, {0, 4, 0}, {1, 4, 250 * time.Millisecond}, {3, 4, 750 * time.Millisecond},
		{94, 95, time.Second * 94 / 95}, {0, 0, 0},
	} {
		if got := phase(time.Second, tc.k, tc.n); got != tc.want {
			t.Errorf("phase(1s, %d, %d) = %v, want %v", tc.k, tc.n, got, tc.want)
		}
	}
}

// TestCollectorNotRunning: a target whose Running says no (a late start not
// yet due, a node never started) is neither scraped nor read in /proc, and
// leaves no error; once it runs, its samples come.
func TestCollectorNotRunning(t *testing.T) {
	expo, err := os.ReadFile(realExposition)
	if err != nil {
		t.Fatal(err)
	}
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(expo) }))
	defer late.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // refuses connections, like a node never started
	dir, err := rundir.Create(t.TempDir(), "collect", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var running atomic.Bool
	c := New(dir, []Target{
		{Node: "late", MetricsURL: late.URL + "/metrics", PID: func() int { return os.Getpid() }, Running: running.Load},
		{Node: "never", MetricsURL: dead.URL + "/metrics", PID: func() int { return 1 << 30 }, Running: func() bool { return false }},
	}, 50*time.Millisecond)
	c.FlushEvery = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	time.Sleep(300 * time.Millisecond)
	// A tick that fired just before the switch may still see it: one
	// interval of slack.
	joined := time.Now().Add(-50 * time.Millisecond).UnixNano()
	running.Store(true)
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := c.Stats(); st.Failures != 0 || st.Scrapes == 0 {
		t.Errorf("stats %+v: want scrapes of late and no failure", st)
	}
	samples, _, err := rundir.SamplesCSV.ReadFile(rundir.SamplesCSV.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range samples {
		if s.Node != "late" || s.TimeNs < joined {
			t.Fatalf("sample of %s at %d (late runs from %d)", s.Node, s.TimeNs, joined)
		}
		n++
	}
	proc, _, err := rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range proc {
		if (p.Node == "late" && p.TimeNs < joined) || p.Node == "never" {
			t.Errorf("proc row of a node not running: %+v", p)
		}
	}
	evs, err := dir.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == rundir.EventScrapeFailed {
			t.Errorf("event %+v", e)
		}
	}
	if n == 0 {
		t.Error("no sample of late once it ran")
	}
}
