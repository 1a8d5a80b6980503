package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// runRotate runs [rotate]: AtATime slots, each cycling its own node of the
// group, until Cycles cycles were started or the load ends.
func (f *Faults) runRotate(ctx context.Context, t0 time.Time) {
	r := f.rotate
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(t0.Add(r.Start.Duration))):
	}
	var group []*plan.Node
	for _, n := range f.tn.Plan.Nodes {
		if n.Group == r.Group {
			group = append(group, n)
		}
	}
	var wg sync.WaitGroup
	for slot := range min(r.AtATime, len(group)) {
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			for {
				cycle, ok := f.nextCycle()
				if !ok || ctx.Err() != nil {
					return
				}
				if !f.cycle(ctx, cycle, node) {
					return
				}
			}
		}(group[slot].Name)
	}
	wg.Wait()
}

func (f *Faults) nextCycle() (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cycles >= f.rotate.Cycles || f.stopped {
		return 0, false
	}
	f.cycles++
	return f.cycles, true
}

// cycle starts node from an empty home, waits until it is at the tip,
// keeps it, stops it and wipes it. It reports false when the slot cannot go
// on (the node would not start or stop).
func (f *Faults) cycle(ctx context.Context, cycle int, node string) bool {
	tn := f.tn
	rc := rundir.RotateCycle{Cycle: cycle, Node: node}
	record := func() {
		d, _ := json.Marshal(rc)
		_ = tn.Dir.Event(rundir.EventRotateCycle, node, string(d))
	}
	// Its home is empty: generated and never run, or wiped by the last cycle.
	rc.StartNs = time.Now().UnixNano()
	if err := tn.StartNode(ctx, node); err != nil {
		rc.Error = err.Error()
		record()
		return false
	}
	deadline := time.Now().Add(f.rotate.CatchUpTimeout.Duration)
	tick := time.NewTicker(heightInterval / 2)
	for rc.CaughtUpNs == 0 && ctx.Err() == nil {
		tip, last, ok := f.Tip(node)
		// At the tip: block sync done, and within a block of the highest
		// height any node reported (the tip moves while we look).
		if ok && last.TimeNs > rc.StartNs && !last.CatchingUp && last.Height >= tip-1 && last.Height > 0 {
			rc.CaughtUpNs, rc.Height, rc.Tip = last.TimeNs, last.Height, tip
			break
		}
		if time.Now().After(deadline) {
			rc.Error = fmt.Sprintf("not at the tip within %s (height %d, tip %d, catching_up %v)", f.rotate.CatchUpTimeout.Duration, last.Height, tip, last.CatchingUp)
			break
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	tick.Stop()
	if rc.CaughtUpNs == 0 && rc.Error == "" {
		rc.Error = "the load ended before it caught up"
	}
	if rc.CaughtUpNs != 0 {
		fmt.Fprintf(f.log, "\nrotate cycle %d: %s at the tip (height %d) in %s\n", cycle, node,
			rc.Height, time.Duration(rc.CaughtUpNs-rc.StartNs).Round(time.Millisecond))
		select {
		case <-ctx.Done():
		case <-time.After(f.rotate.Keep.Duration):
		}
	}
	// Stop and wipe even when the load ended: the next cycle (or the
	// teardown) finds an empty home, and heights.csv shows the gap.
	// Forgotten first: the collectors and pollers stop reaching it before
	// it goes, so a planned stop is no scrape or poll failure.
	bg := context.WithoutCancel(ctx)
	tn.Forget(node)
	err := tn.StopNode(bg, node)
	if err == nil {
		err = tn.Wipe(bg, node)
	}
	rc.StopNs = time.Now().UnixNano()
	if err != nil && rc.Error == "" {
		rc.Error = err.Error()
	}
	record()
	return err == nil
}
