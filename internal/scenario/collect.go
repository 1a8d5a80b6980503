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
)

// StartCollector writes machine.json and scrapes every node of p (metrics and
// /proc stats; pid gives a node's process, 0 when none) until the returned
// stop is called. running (nil: every node runs) says whether a node runs
// now: one that does not (a late start not yet due, a [rotate] node between
// cycles) is not scraped until it does. It outlives ctx's cancellation, so an interrupted run
// keeps collecting until its teardown; stop is idempotent.
func StartCollector(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, pid func(node string) int, running func(node string) bool, interval time.Duration, log io.Writer) (stop func()) {
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
