package scenario

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
)

const subnetTestbed = "10.213.207.0/24"

// TestTestbedBoundUnderHog runs a short quickstart while two busy loops
// (sha256sum /dev/zero, one per core of the development machine) load the
// machine from outside the run: the analysis must mark the run
// testbed-bound with the outside-load reason, whatever else the run shows.
func TestTestbedBoundUnderHog(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	bin, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("no sha256sum for the CPU hog")
	}
	for range 2 {
		cmd := exec.Command(bin, "/dev/zero")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start hog: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	time.Sleep(time.Second) // the hogs are running before the collector's first sample
	m := example(t, "quickstart.toml", subnetTestbed, map[string]map[string]string{
		"load": {"rate": "100", "duration": `"10s"`, "warmup": `"20s"`, "grace": `"15s"`},
	})
	out := steadyRun(t, m, 3*time.Minute)
	res := out.Results
	tb := res.Testbed
	if tb == nil {
		t.Fatalf("no testbed figures in results.json (testbed_bound %q)", res.TestbedBound)
	}
	t.Logf("testbed over %.0f s on %d CPUs: busy %.2f cores, own %.2f (%s), outside %.2f, steal %.1f %%; committed %d of %d; testbed_bound %q",
		tb.HostSec, tb.CPUs, tb.BusyCores, tb.OwnCores, strings.Join(tb.Processes, ","), tb.OutsideCores, tb.StealPct,
		res.Accounting.Committed, res.Accounting.Sent, res.TestbedBound)
	if tb.OutsideCores <= analyze.MaxOutsideCores {
		t.Errorf("outside load %.2f cores with two busy loops running, want > %.1f", tb.OutsideCores, analyze.MaxOutsideCores)
	}
	found := false
	for _, w := range res.TestbedBound {
		found = found || strings.HasPrefix(w, "load from outside the run: ")
	}
	if !found || res.Valid {
		t.Errorf("run not marked testbed-bound by outside load: testbed_bound %q, valid %v", res.TestbedBound, res.Valid)
	}
	if !strings.Contains(strings.Join(res.Invalid, "\n"), "testbed-bound: load from outside the run") {
		t.Errorf("invalid_reasons %q lack the testbed-bound reason", res.Invalid)
	}
}
