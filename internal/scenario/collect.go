package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

// StartCollector writes machine.json and scrapes every node of p (metrics and
// /proc stats; pid gives a node's process, 0 when none) until the returned
// stop is called. running (nil: every node runs) says whether a node runs
// now: one that does not (a late start not yet due, a [rotate] node between
// cycles) is not scraped until it does. It outlives ctx's cancellation, so an interrupted run
// keeps collecting until its teardown; stop is idempotent. machines are
// the cluster's machines to watch (Machines), each into machines.csv.
func StartCollector(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, pid func(node string) int, running func(node string) bool, machines []collect.MachineTarget, interval time.Duration, log io.Writer) (stop func()) {
	var targets []collect.Target
	for _, n := range p.Nodes {
		name := n.Name
		t := collect.Target{Node: name, MetricsURL: n.MetricsURL(), URL: n.MetricsURL, PID: func() int { return pid(name) }}
		if running != nil {
			t.Running = func() bool { return running(name) }
		}
		targets = append(targets, t)
	}
	if err := collect.WriteMachine(dir); err != nil {
		fmt.Fprintf(log, "warning: machine.json: %v\n", err)
	}
	col := collect.New(dir, targets, interval)
	col.Machines = machines
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- col.Run(cctx) }()
	return func() {
		if cancel == nil {
			return
		}
		cancel()
		cancel = nil
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(log, "warning: collector: %v\n", err)
		}
	}
}

// Machines are the machines a testnet's runner places nodes on, when it
// watches them (infra.MachineWatcher: swarm), as collector targets; none
// on a runner of one machine. A machine without an exporter is said in
// log and in an event, and the run goes on without its series.
func Machines(ctx context.Context, tn *testnet.Testnet, log io.Writer) []collect.MachineTarget {
	ms, err := tn.Machines(ctx)
	if err != nil {
		fmt.Fprintf(log, "warning: per-machine load: %v\n", err)
		_ = tn.Dir.Event(rundir.EventScrapeFailed, "", "machines: "+err.Error())
	}
	var out []collect.MachineTarget
	for _, m := range ms {
		url := m.URL
		out = append(out, collect.MachineTarget{Name: m.Name, URL: func() string { return url }})
	}
	return out
}
