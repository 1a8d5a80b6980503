package analyze

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// The testbed check: is a run's result the build's, or the machine's? Its
// signals are kind-independent (a gossip run has a publish window, hosts
// and a harness as a tx run has), so it lives here; each kind's analysis
// gives it its window, its counts and its generator's reasons.

// MaxOutsideCores is the CPU, in cores averaged over the load window, that
// processes outside the run may take before the run is testbed-bound. The
// kernel's own threads (kworkers flushing the nodes' stores, ksoftirqd,
// RCU) and the collector's read of /proc are charged to no run process and
// stay well below a tenth of a core on an idle machine; 0.3 core is a
// competitor taking 15 % of a 2-core machine, enough to delay consensus
// steps by whole scheduler slices (another engineer's `go test`, a build).
const MaxOutsideCores = 0.3

// MaxStealPct is the steal time, in percent of all CPU time over the
// window, above which the run is testbed-bound: the hypervisor withheld
// the cores from the whole VM, so timings measure the neighbours. A
// quiet cloud VM steals well under 1 %; 5 % is a core withheld 50 ms a
// second on a 1-core share, the size of a block interval's slack.
const MaxStealPct = 5.0

// StealLimitEnv overrides MaxStealPct for a lab whose hypervisor steals
// more than a quiet VM's and that accepts it (a percentage, 0 to 100):
// this machine's steal sat at 3-6 % for hours on 2026-11-29, and the
// real-node tests of something else than the testbed check run under 25
// (testenv.Integration sets it).
const StealLimitEnv = "BENCHNET_MAX_STEAL_PCT"

// stealLimit is the steal limit in force, or why the override is refused.
func stealLimit() (float64, string) {
	v := os.Getenv(StealLimitEnv)
	if v == "" {
		return MaxStealPct, ""
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0 && f <= 100) {
		return MaxStealPct, fmt.Sprintf("%s=%q is not a percentage from 0 to 100: the testbed check cannot run", StealLimitEnv, v)
	}
	return f, ""
}

// StealWhy ends the reason of a run the hypervisor's steal bound: tests
// of something else rerun a measurement whose only fault it was.
const StealWhy = "the hypervisor withheld the cores"

// OnlyStolen reports whether reasons are all CPU steal (and there is one).
func OnlyStolen(reasons []string) bool {
	for _, r := range reasons {
		if !strings.Contains(r, StealWhy) {
			return false
		}
	}
	return len(reasons) > 0
}

// TestbedInput is what CheckTestbed reads.
type TestbedInput struct {
	// FromNs, ToNs bound the load window (first intended send, last send).
	FromNs, ToNs int64
	Host         []rundir.Host // metrics/host.csv
	Proc         []rundir.Proc // metrics/proc.csv
	// Sent and Committed count the load's units (txs); Unit names them.
	// Sent > 0 with Committed == 0 is a broken run.
	Sent, Committed int
	// Blocks is how many blocks the chain harvested (-1: not a chain).
	Blocks int
	Unit   string
	// Generator are the load generator's invalid reasons (its lag, its
	// achieved rate): repeated as testbed-bound reasons.
	Generator []string
}

// CheckTestbed returns the machine's figures over the load window (nil
// without two host.csv samples around it) and every reason the run is
// testbed-bound (none: the result is the build's).
func CheckTestbed(in TestbedInput) (*rundir.TestbedCheck, []string) {
	why := append([]string(nil), in.Generator...)
	unit := in.Unit
	if unit == "" {
		unit = "txs"
	}
	switch {
	case in.Sent > 0 && in.Blocks == 0:
		why = append(why, fmt.Sprintf("the chain harvested no block while %d %s were sent: a broken run, not a measurement", in.Sent, unit))
	case in.Sent > 0 && in.Committed == 0:
		why = append(why, fmt.Sprintf("the chain committed none of the %d %s sent: a broken run, not a measurement", in.Sent, unit))
	}
	tb := machineOver(in.FromNs, in.ToNs, in.Host, in.Proc)
	if tb != nil {
		if tb.OutsideCores > MaxOutsideCores {
			why = append(why, fmt.Sprintf("load from outside the run: %.2f cores busy over the load window (%.0f s) beside the run's own %.2f (nodes and harness) of %.2f busy on %d CPUs, limit %.1f",
				tb.OutsideCores, tb.HostSec, tb.OwnCores, tb.BusyCores, tb.CPUs, MaxOutsideCores))
		}
		limit, bad := stealLimit()
		if bad != "" {
			why = append(why, bad)
		}
		if tb.StealPct > limit {
			why = append(why, fmt.Sprintf("CPU steal %.1f %% of the CPU time over the load window (limit %.0f %%): %s", tb.StealPct, limit, StealWhy))
		}
	}
	return tb, why
}

// machineOver measures the machine between the host.csv samples that
// bracket [from, to]: busy cores (steal, irq and softirq left out: the
// first is not ours to use, the others, the veths' packet work among them,
// are charged to no process), the run's own cores (every proc.csv process
// sampled in /proc, pid > 0: a remote node's row, read from its metrics,
// ran elsewhere) and steal.
func machineOver(from, to int64, host []rundir.Host, proc []rundir.Proc) *rundir.TestbedCheck {
	if len(host) < 2 || to < from {
		return nil
	}
	hs := append([]rundir.Host(nil), host...)
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].TimeNs < hs[j].TimeNs })
	i0, i1 := 0, len(hs)-1
	for i, h := range hs {
		if h.TimeNs <= from {
			i0 = i
		}
	}
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].TimeNs >= to {
			i1 = i
		}
	}
	h0, h1 := hs[i0], hs[i1]
	if h1.TimeNs <= h0.TimeNs {
		return nil
	}
	sec := float64(h1.TimeNs-h0.TimeNs) / 1e9
	dBusy := (h1.CPUBusySeconds - h1.CPUStealSeconds - h1.CPUIRQSeconds) - (h0.CPUBusySeconds - h0.CPUStealSeconds - h0.CPUIRQSeconds)
	dTotal := h1.CPUTotalSeconds - h0.CPUTotalSeconds
	dSteal := h1.CPUStealSeconds - h0.CPUStealSeconds
	tb := &rundir.TestbedCheck{FromNs: from, ToNs: to, HostSec: Round3(sec), CPUs: h1.CPUs, BusyCores: dBusy / sec}
	if dTotal > 0 {
		tb.StealPct = Round3(100 * dSteal / dTotal)
	}
	// Own CPU: per process (node, pid), the CPU between its first and
	// last sample inside the host span. The collector samples processes
	// and host in the same tick, so the spans line up.
	type key struct {
		node string
		pid  int
	}
	first, last := map[key]rundir.Proc{}, map[key]rundir.Proc{}
	names := map[string]bool{}
	for _, p := range proc {
		if p.PID <= 0 || p.TimeNs < h0.TimeNs || p.TimeNs > h1.TimeNs {
			continue
		}
		k := key{p.Node, p.PID}
		if f, ok := first[k]; !ok || p.TimeNs < f.TimeNs {
			first[k] = p
		}
		if l, ok := last[k]; !ok || p.TimeNs > l.TimeNs {
			last[k] = p
		}
	}
	var own float64
	for k, f := range first {
		if d := last[k].CPUSeconds - f.CPUSeconds; d > 0 {
			own += d
		}
		names[k.node] = true
	}
	for n := range names {
		tb.Processes = append(tb.Processes, n)
	}
	sort.Strings(tb.Processes)
	tb.OwnCores = own / sec
	tb.OutsideCores = math.Max(0, tb.BusyCores-tb.OwnCores)
	tb.BusyCores, tb.OwnCores, tb.OutsideCores = Round3(tb.BusyCores), Round3(tb.OwnCores), Round3(tb.OutsideCores)
	return tb
}
