package linkem_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/linkemtest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestLatenessCertifies runs the switch between two real namespaces twice:
// once as a run has it (real-time delivery thread), once with its delivery
// thread made ordinary and starved by spinning processes pinned to its CPU
// (see linkemtest.Hog). The switch's own record (lateness.jsonl), checked
// over the traffic's window, must say the first met the bound and the
// second did not.
//
// The unstarved case gets up to three tries: a hypervisor withholding the
// cores (CPU steal, logged per try) delays a real-time thread too, and on
// this lab one try in a CI run was late by 0.3 ms at p99 under 3-13 %
// steal. Late three times running is the emulator's fault.
func TestLatenessCertifies(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name string
		hog  int // spinning processes beside the delivery thread
		met  bool
	}{
		{"unstarved", 0, true},
		{"starved", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 1
			if tc.met {
				tries = 3
			}
			var c rundir.LinkLateness
			for try := 1; try <= tries; try++ {
				c = lateness(t, tc.hog)
				t.Logf("%s, try %d: %s", tc.name, try, c.Verdict)
				if c.Met == tc.met {
					break
				}
			}
			if c.Frames < 1000 {
				t.Fatalf("only %d delayed frames recorded in the window", c.Frames)
			}
			if c.Met != tc.met {
				// Unstarved and still late: the machine's CPUs are saturated
				// beyond what a real-time thread in a Go process escapes
				// (docs/linkem.md); the load average is logged above.
				t.Errorf("met = %v, want %v: %s", c.Met, tc.met, c.Verdict)
			}
			if tc.hog == 0 && c.Sched != "SCHED_FIFO 1" {
				t.Errorf("delivery thread %q, want SCHED_FIFO 1 (UserspaceConfig.Realtime, as root)", c.Sched)
			}
			if c.BoundMs != 1 || c.SmallestDelayMs != 5 {
				t.Errorf("bound %v ms for smallest delay %v ms, want 1 and 5", c.BoundMs, c.SmallestDelayMs)
			}
		})
	}
}

// lateness pings across a 5 ms link for 2 s (with hog processes beside the
// delivery thread) and checks the switch's record over the pings' window.
func lateness(t *testing.T, hog int) rundir.LinkLateness {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	eps := []linkem.Endpoint{
		{Name: "a", Zone: "za", Addr: netip.MustParseAddr("10.213.250.2")},
		{Name: "b", Zone: "zb", Addr: netip.MustParseAddr("10.213.250.3")},
	}
	m, err := linkem.New(eps, nil, func(_, _ linkem.Endpoint) linkem.Link { return linkem.Link{Delay: 5 * time.Millisecond} }, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	u, err := linkem.NewUserspace(linkem.UserspaceConfig{RecordDir: dir, RecordEvery: 100 * time.Millisecond, Realtime: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = u.Close()
		}
	})
	lab, err := linkemtest.Setup(ctx, u, eps, 24)
	if lab != nil {
		t.Cleanup(func() {
			if err := lab.Close(); err != nil {
				t.Errorf("delete namespaces: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Apply(ctx, m); err != nil {
		t.Fatal(err)
	}
	ping(ctx, t, lab.Netns["a"], "10.213.250.3", "-c", "1", "-W", "2") // ARP first
	stop := func() error { return nil }
	if hog > 0 {
		if stop, err = linkemtest.Hog(ctx, u.DeliveryThread(), hog); err != nil {
			t.Fatal(err)
		}
		defer stop() //nolint:errcheck // stopped below; this covers a Fatal
	}
	from, cpu0 := time.Now(), procStatCPU(t)
	r := ping(ctx, t, lab.Netns["a"], "10.213.250.3", "-q", "-c", "1000", "-i", "0.002", "-W", "1")
	to, cpu1 := time.Now(), procStatCPU(t)
	if err := stop(); err != nil {
		t.Errorf("stop hog: %v", err)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("loadavg %s", strings.TrimSpace(string(load)))
	if total := cpu1.total - cpu0.total; total > 0 {
		t.Logf("CPU steal over the pings: %.1f %%", 100*(cpu1.steal-cpu0.steal)/total)
	}
	t.Logf("ping: %d/%d replies, rtt min %v avg %v max %v (configured 10ms)", r.received, r.sent, r.min, r.avg, r.max)
	closed = true
	if err := u.Close(); err != nil { // writes the last line
		t.Fatal(err)
	}
	series, _, err := rundir.LinkemLatenessSeries.ReadFile(filepath.Join(dir, rundir.LinkemLatenessSeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	return linkem.CheckLateness(series, from, to, "ping")
}

// cpuTimes is the machine's total and stolen CPU seconds so far
// (collect.ParseStat, the sampler's reader of /proc/stat).
type cpuTimes struct{ total, steal float64 }

func procStatCPU(t *testing.T) cpuTimes {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	_, total, steal, _, _, err := collect.ParseStat(b)
	if err != nil {
		t.Fatalf("/proc/stat: %v", err)
	}
	return cpuTimes{total, steal}
}
