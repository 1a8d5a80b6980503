package analyze

import (
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// hostRows is a 2-CPU machine sampled every second for n seconds: busy
// cores of busy CPU each second (steal and irq included), steal and irq
// the cores of each.
func hostRows(n int, busy, steal, irq float64) []rundir.Host {
	var rows []rundir.Host
	for i := 0; i <= n; i++ {
		s := float64(i)
		rows = append(rows, rundir.Host{TimeNs: int64(i) * 1e9, CPUs: 2,
			CPUBusySeconds: (busy + steal + irq) * s, CPUTotalSeconds: 2 * s, CPUStealSeconds: steal * s, CPUIRQSeconds: irq * s})
	}
	return rows
}

// procRows samples each named process every second using cores each.
func procRows(n int, cores float64, names ...string) []rundir.Proc {
	var rows []rundir.Proc
	for i := 0; i <= n; i++ {
		for k, name := range names {
			rows = append(rows, rundir.Proc{TimeNs: int64(i) * 1e9, Node: name, PID: 100 + k, CPUSeconds: cores * float64(i)})
		}
	}
	return rows
}

func TestCheckTestbed(t *testing.T) {
	const w = 10 // seconds
	// The default limit, whatever an integration test of this binary set
	// (testenv raises it for those; its name must be this package's).
	t.Setenv(StealLimitEnv, "")
	if testenv.StealLimitEnv != StealLimitEnv {
		t.Fatalf("testenv raises %s, the check reads %s", testenv.StealLimitEnv, StealLimitEnv)
	}
	nodes := []string{"validator0", "validator1", "validator2", "validator3", rundir.HarnessNode}
	for _, c := range []struct {
		name    string
		in      TestbedInput
		want    []string // substrings, one per reason, in order
		outside float64
		steal   float64
	}{
		{name: "quiet: the run's own processes are all the load",
			in:      TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 1.0, 0, 0.05), Proc: procRows(w, 0.2, nodes...), Sent: 100, Committed: 100, Blocks: 5},
			outside: 0},
		{name: "small outside load below the limit",
			in:      TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 1.2, 0, 0), Proc: procRows(w, 0.2, nodes...), Sent: 100, Committed: 100, Blocks: 5},
			outside: 0.2},
		{name: "outside load: two busy loops beside the run",
			in:      TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 1.9, 0, 0), Proc: procRows(w, 0.1, nodes...), Sent: 100, Committed: 100, Blocks: 5},
			want:    []string{"load from outside the run: 1.40 cores"},
			outside: 1.4},
		{name: "remote rows (pid 0) ran elsewhere: not the run's CPU here",
			in: TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0, 0),
				Proc: append(procRows(w, 0.1, nodes...), rundir.Proc{TimeNs: 2e9, Node: "remote", CPUSeconds: 0}, rundir.Proc{TimeNs: 8e9, Node: "remote", CPUSeconds: 60}), Sent: 1, Committed: 1, Blocks: 1},
			outside: 0},
		{name: "steal above its limit",
			in:    TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0.2, 0), Proc: procRows(w, 0.1, nodes...), Sent: 100, Committed: 100, Blocks: 5},
			want:  []string{"CPU steal 10.0 %"},
			steal: 10},
		{name: "steal below its limit",
			in:    TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0.04, 0), Proc: procRows(w, 0.1, nodes...), Sent: 100, Committed: 100, Blocks: 5},
			steal: 2},
		{name: "irq and softirq are no outside load",
			in: TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0, 0.6), Proc: procRows(w, 0.1, nodes...), Sent: 100, Committed: 100, Blocks: 5}},
		{name: "committed nothing of what was sent",
			in:   TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0, 0), Proc: procRows(w, 0.1, nodes...), Sent: 2000, Committed: 0, Blocks: 12},
			want: []string{"the chain committed none of the 2000 txs sent"}},
		{name: "no block harvested while txs were sent",
			in:   TestbedInput{Sent: 2000, Committed: 0, Blocks: 0},
			want: []string{"the chain harvested no block while 2000 txs were sent"}},
		{name: "nothing sent is not a broken chain (the generator's problem)",
			in:   TestbedInput{Sent: 0, Committed: 0, Blocks: 0, Generator: []string{"conn v0/0: achieved 0.0 tx/s < 95% of target 200.0 tx/s"}},
			want: []string{"achieved 0.0 tx/s"}},
		{name: "generator lag is repeated, outside load added",
			in: TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 2, 0, 0), Proc: procRows(w, 0.1, nodes...), Sent: 100, Committed: 100, Blocks: 5,
				Generator: []string{"conn v0/0: send lag p99 250.0 ms > 100ms"}},
			want:    []string{"send lag p99", "load from outside the run: 1.50 cores"},
			outside: 1.5},
		{name: "an old host.csv (no steal column) reads steal 0",
			in: TestbedInput{FromNs: 1e9, ToNs: 9e9, Host: hostRows(w, 0.5, 0, 0), Proc: procRows(w, 0.1, nodes...), Sent: 1, Committed: 1, Blocks: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, why := CheckTestbed(c.in)
			if len(why) != len(c.want) {
				t.Fatalf("reasons %q, want %d matching %q", why, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(why[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, why[i], w)
				}
			}
			if c.in.Host == nil {
				if tb != nil {
					t.Errorf("figures without host.csv: %+v", tb)
				}
				return
			}
			if tb == nil {
				t.Fatal("no figures")
			}
			if d := tb.OutsideCores - c.outside; d > 0.001 || d < -0.001 {
				t.Errorf("outside cores %.3f, want %.3f (%+v)", tb.OutsideCores, c.outside, tb)
			}
			if d := tb.StealPct - c.steal; d > 0.001 || d < -0.001 {
				t.Errorf("steal %.3f %%, want %.3f", tb.StealPct, c.steal)
			}
			if stolen := c.steal > MaxStealPct && len(why) == 1; OnlyStolen(why) != stolen {
				t.Errorf("OnlyStolen(%q) = %v, want %v", why, !stolen, stolen)
			}
		})
	}
	// The override: a lab that accepts more steal says so; a bad value
	// is named, never silently the default.
	in := TestbedInput{FromNs: 2e9, ToNs: 8e9, Host: hostRows(10, 0.1, 0.2, 0)} // 10 % steal
	t.Setenv(StealLimitEnv, "25")
	if _, why := CheckTestbed(in); len(why) != 0 {
		t.Errorf("steal 10 %% under a limit of 25 %%: %q", why)
	}
	t.Setenv(StealLimitEnv, "lots")
	if _, why := CheckTestbed(in); len(why) != 2 || !strings.Contains(why[0], StealLimitEnv+`="lots"`) {
		t.Errorf("a bad %s: %q, want it named and the default limit applied", StealLimitEnv, why)
	}
	if OnlyStolen(nil) || OnlyStolen([]string{"CPU steal 9 %: " + StealWhy, "load from outside the run"}) {
		t.Error("OnlyStolen: true without reasons, or with another reason beside steal")
	}
}

// TestCheckTestbedWindow: the figures cover the host samples around the
// window, not the whole file: a hog before the load does not count.
func TestCheckTestbedWindow(t *testing.T) {
	host := hostRows(20, 0.3, 0, 0)
	// seconds 0-10 had 1.5 cores more busy than the rest
	for i := range host {
		s := float64(min(i, 10))
		host[i].CPUBusySeconds += 1.5 * s
	}
	proc := procRows(20, 0.1, "validator0", rundir.HarnessNode)
	tb, why := CheckTestbed(TestbedInput{FromNs: 12e9 + 3e8, ToNs: 18e9 + 5e8, Host: host, Proc: proc, Sent: 10, Committed: 10, Blocks: 3})
	if len(why) != 0 || tb == nil {
		t.Fatalf("reasons %q, figures %+v", why, tb)
	}
	if tb.HostSec != 7 || tb.OutsideCores > 0.101 || tb.OwnCores != 0.2 {
		t.Errorf("figures %+v, want 7 s (12 to 19), own 0.2, outside 0.1", tb)
	}
	if got := strings.Join(tb.Processes, ","); got != "benchnet,validator0" {
		t.Errorf("processes %s", got)
	}
	tb, why = CheckTestbed(TestbedInput{FromNs: 2e9, ToNs: 8e9, Host: host, Proc: proc, Sent: 10, Committed: 10, Blocks: 3})
	if len(why) != 1 || !strings.Contains(why[0], "outside the run") {
		t.Errorf("hog inside the window: reasons %q (%+v)", why, tb)
	}
}
