package collect

import (
	"bytes"
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A /proc/stat of two CPUs whose aggregate line is the sum of the two, as
// the kernel writes it.
const stat2 = `cpu  300 20 100 5000 40 6 4 30 0 0
cpu0 100 10 60 2600 20 2 2 10 0 0
cpu1 200 10 40 2400 20 4 2 20 0 0
intr 1 2 3
ctxt 42
`

// TestMachineExposition: what the exporter writes reads back, through
// HostOf, as the same row ParseStat makes of the aggregate line.
func TestMachineExposition(t *testing.T) {
	var b bytes.Buffer
	if err := writeMachineExposition(&b, []byte("0.50 1.25 2.00 3/400 5000\n"), []byte(stat2)); err != nil {
		t.Fatal(err)
	}
	var p promtext.Parser
	if err := p.Parse(&b); err != nil {
		t.Fatalf("parse %q: %v", b.String(), err)
	}
	h, err := HostOf(p.Samples)
	if err != nil {
		t.Fatal(err)
	}
	busy, total, steal, irq, cpus, err := ParseStat([]byte(stat2))
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if h.Load1 != 0.5 || h.Load5 != 1.25 || h.Load15 != 2 {
		t.Errorf("load %v %v %v, want 0.5 1.25 2", h.Load1, h.Load5, h.Load15)
	}
	if !near(h.CPUBusySeconds, busy) || !near(h.CPUTotalSeconds, total) || !near(h.CPUStealSeconds, steal) ||
		!near(h.CPUIRQSeconds, irq) || h.CPUs != cpus {
		t.Errorf("HostOf = busy %v total %v steal %v irq %v cpus %d; ParseStat: %v %v %v %v %d",
			h.CPUBusySeconds, h.CPUTotalSeconds, h.CPUStealSeconds, h.CPUIRQSeconds, h.CPUs, busy, total, steal, irq, cpus)
	}

	for _, bad := range []struct{ name, loadavg, stat string }{
		{"short loadavg", "0.5 1", stat2},
		{"no per-cpu line", "0.5 1 2 1/2 3", "cpu 1 2 3 4\n"},
		{"bad tick", "0.5 1 2 1/2 3", "cpu0 1 x 3 4\n"},
	} {
		if err := writeMachineExposition(&b, []byte(bad.loadavg), []byte(bad.stat)); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
	if _, err := HostOf(nil); err == nil {
		t.Error("HostOf of no samples: no error")
	}
}

// TestCollectorMachines: the exporter served over HTTP (this machine's
// real /proc), scraped as a machine, gives machines.csv rows whose CPU
// count and load match host.csv's, written beside it; a machine without
// an address yet is skipped, and one whose exporter fails is a scrape
// error, not a row.
func TestCollectorMachines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	served := make(chan error, 1)
	go func() { served <- ServeMachine(ctx, addr) }()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("up 1\n")) }))
	defer broken.Close()

	dir, err := rundir.Create(t.TempDir(), "collect", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var known atomic.Bool
	c := New(dir, nil, 50*time.Millisecond)
	c.FlushEvery = 50 * time.Millisecond
	c.Machines = []MachineTarget{
		{Name: "m1", URL: func() string {
			if !known.Load() {
				return ""
			}
			return "http://" + addr + "/metrics"
		}},
		{Name: "m2", URL: func() string { return broken.URL + "/metrics" }},
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	time.Sleep(200 * time.Millisecond)
	known.Store(true)
	time.Sleep(400 * time.Millisecond)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("exporter: %v", err)
	}
	rows, _, err := rundir.MachinesCSV.ReadFile(rundir.MachinesCSV.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	host, err := ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("%d machines.csv rows, want >= 2 of m1", len(rows))
	}
	for _, r := range rows {
		if r.Machine != "m1" {
			t.Fatalf("row of %q: only m1 answers", r.Machine)
		}
		if r.CPUs != host.CPUs || r.CPUTotalSeconds <= 0 || r.CPUBusySeconds > r.CPUTotalSeconds || r.Load1 < 0 {
			t.Errorf("row %+v against this machine's %+v", r, host)
		}
	}
	errs, _, err := rundir.ScrapeErrorsCSV.ReadFile(rundir.ScrapeErrorsCSV.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) == 0 || errs[0].Source != "machine m2" || !strings.Contains(errs[0].Error, "node_load1") {
		t.Errorf("scrape errors %+v: want m2's missing families", errs)
	}
}
