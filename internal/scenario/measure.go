// Package scenario strings the stages of a run together: up, collectors,
// warm-up, load, drain, harvest, analyze, report, down. Each stage lives in
// its own package and talks to the next only through the run directory; this
// package decides the order, the timeouts and what an interrupt keeps.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// finishTimeout bounds the harvest and analysis of an interrupted run, so a
// Ctrl-C still leaves results for what was sent, but soon.
const finishTimeout = 30 * time.Second

// interruptDrain bounds the wait for the mempools once the run is
// interrupted (Ctrl-C during the load or the drain), counted from the start
// of the drain: enough for a few blocks to take what the nodes hold (at 300
// tx/s on the quickstart they emptied within about 2 s), short enough to
// answer a Ctrl-C soon. A tx still in no block when it ends is pending, not
// lost. (A second Ctrl-C quits at once.)
const interruptDrain = 15 * time.Second

// Measure runs the measured part of a run against a testnet that is up:
// warm-up, the open-loop load (sent.csv), drain, harvest (blocks.csv) and
// analysis (txs.csv, results.json). It is what `benchnet load` runs alone.
// When ctx is cancelled during the load it still harvests and analyzes what
// was sent, then returns the results together with ctx's cause.
func Measure(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, runID string, log, progressOut io.Writer) (*rundir.Results, error) {
	return MeasureLoad(ctx, dir, p, p.Load, runID, log, progressOut)
}

// MeasureLoad is Measure with the load given rather than read from the
// plan: one measurement of an experiment (a sweep cell, a search probe).
func MeasureLoad(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer) (*rundir.Results, error) {
	return measure(ctx, dir, p, l, runID, log, progressOut, nil, nil)
}

// MeasureRunning is MeasureLoad on a testnet where some nodes may not run:
// notStarted (nil: every node runs) names them at any moment (a [rotate]
// group `benchnet up` never started, a late start not yet due). See
// measure for what leaves them out.
func MeasureRunning(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer, notStarted func(string) bool) (*rundir.Results, error) {
	return measure(ctx, dir, p, l, runID, log, progressOut, nil, notStarted)
}

// measure is MeasureLoad with faults (nil: none) run during the load; a halt
// they detect ends the load like an interrupt, with the halt as the cause.
// notStarted (nil: every node runs) names the nodes not running at a given
// moment (rotating nodes, late starts). The load's targets are the nodes
// running when it begins: a load node not running then is skipped (an event,
// a line in the log and load.json's Skipped) and its share goes to the
// running targets, so the load sends exactly what it was asked to. The
// warm-up waits for the nodes running at its start; the mempool poller
// takes a node in once it runs (a late joiner from its start, no failed
// poll before), and the drain waits for every node running when it begins.
func measure(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer, faults *Faults, notStarted func(string) bool) (*rundir.Results, error) {
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	cfg := load.FromManifest(l, runID)
	cfg.Seed = p.Seed
	running := func(name string) bool { return notStarted == nil || !notStarted(name) }
	chain, err := txChain(p)
	if err != nil {
		return nil, err
	}
	targets, skipped := loadTargets(chain, p, l, running)
	if len(targets) == 0 {
		return nil, fmt.Errorf("load: none of the load's nodes runs (%s)", skipList(skipped))
	}
	if l.Workload == manifest.WorkloadAccounts && l.Target != manifest.TargetAllNodes {
		for _, s := range skipped {
			if s.Node == l.Target {
				return nil, fmt.Errorf("load.target %q does not run when the load begins (%s): target a node that runs", s.Node, s.Reason)
			}
		}
	}
	for _, s := range skipped {
		fmt.Fprintf(log, "load: %s skipped: %s\n", s.Node, s.Reason)
		_ = dir.Event(rundir.EventLoadTargetSkipped, s.Node, s.Reason)
	}

	// The warm-up proves every node commits txs before the clock starts.
	warm, err := warmupTxs(cfg, targets)
	if err != nil {
		return nil, err
	}
	if err := chain.WarmUp(ctx, p, runningNodes(p, running), warm, l.Warmup.Duration, log); err != nil {
		return nil, err
	}
	_ = dir.Event(rundir.EventWarmupDone, "", "")

	win, err := chain.Open(ctx, dir, p, running)
	if err != nil {
		return nil, err
	}
	defer win.Close()

	sink, err := load.NewSentWriter(rundir.SentCSV.Path(dir))
	if err != nil {
		return nil, err
	}
	runner, err := load.NewRunner(cfg, targets, sink)
	if err != nil {
		_ = sink.Close()
		return nil, err
	}
	if cfg.Workload == manifest.WorkloadAccounts {
		fmt.Fprintf(log, "load: accounts workload, %d accounts x %d signed txs (%s, write_keys %d), %g tx/s per account, target %s, %s %s\n",
			cfg.Accounts, cfg.TxsPerAccount, cfg.Order, cfg.WriteKeys, cfg.Rate, cfg.Target, cfg.Transport, cfg.Method)
	} else {
		fmt.Fprintf(log, "load: %d txs of %d bytes, %s rate %g tx/s x %d connection(s), target %s, %s %s, format %s\n",
			runner.Expected(), cfg.Size, cfg.Shape, cfg.Rate, cfg.Connections, cfg.Target, cfg.Transport, cfg.Method, cfg.Format)
	}
	_ = dir.Event(rundir.EventLoadStart, "", fmt.Sprintf("%d txs", runner.Expected()))
	prog := newProgress(progressOut, runner, win)
	progDone := prog.start()
	stopFaults := func() {}
	if faults != nil {
		stopFaults = faults.Start(ctx, time.Now(), fail)
	}
	sum, loadErr := runner.Run(ctx)
	stopFaults()
	prog.stop()
	<-progDone
	if err := sink.Close(); err != nil {
		loadErr = errors.Join(loadErr, fmt.Errorf("close %s: %w", rundir.SentCSV.Name, err))
	}
	_ = dir.Event(rundir.EventLoadDone, "", fmt.Sprintf("sent %d, send errors %d", sum.Sent, sum.SendErrors))
	sum.Skipped = skipped
	_ = dir.WriteLoad(&sum)
	interrupted := ctx.Err() != nil
	if loadErr != nil && !interrupted {
		return nil, fmt.Errorf("load: %w", loadErr)
	}

	// Every node running now, late joiners included.
	drain := drainMempools(ctx, win, faults.answering(runningNodes(p, running)), l.Grace.Duration, log)
	_ = dir.Event(rundir.EventDrained, "", drain.String())

	fctx := ctx
	if ctx.Err() != nil {
		interrupted = true
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		fmt.Fprintf(log, "interrupted: harvesting what was sent (at most %s)\n", finishTimeout)
	}
	if err := win.Harvest(fctx, dir, drain.record); err != nil {
		return nil, err
	}
	res, _, err := analyze.Run(dir) // the kind's analysis, by plan.json's kind
	if err != nil {
		return nil, err
	}
	if faults != nil {
		if err := reportFaults(dir.Path, log); err != nil {
			return res, err
		}
	}
	if interrupted {
		return res, context.Cause(ctx)
	}
	return res, nil
}

// txChain is the driver of p's kind as a tx chain.
func txChain(p *plan.Testnet) (node.TxChain, error) {
	d, err := node.New(p.NodeKind(), node.Config{})
	if err != nil {
		return nil, err
	}
	c, ok := d.(node.TxChain)
	if !ok {
		return nil, fmt.Errorf("node kind %s takes no tx load", p.NodeKind())
	}
	return c, nil
}

// runningNodes are the names of p's nodes running now, in p's order.
func runningNodes(p *plan.Testnet, running func(string) bool) []string {
	var out []string
	for _, n := range p.Nodes {
		if running(n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// loadTargets is where the load goes: the chain's load nodes for the
// workload (TxChain.LoadNodes), those running now; skipped are the others,
// with the reason.
func loadTargets(chain node.TxChain, p *plan.Testnet, l manifest.Load, running func(string) bool) (targets []load.Target, skipped []rundir.LoadSkip) {
	for _, n := range chain.LoadNodes(p, l.Workload) {
		if running(n.Name) {
			targets = append(targets, load.Target{Node: n.Name, RPCURL: n.RPCURL(), URL: n.RPCURL})
			continue
		}
		why := "not running when the load began ([rotate] node or stopped)"
		if n.StartDelay > 0 {
			why = fmt.Sprintf("not started when the load began (start_delay %s)", n.StartDelay)
		}
		if l.Workload != manifest.WorkloadAccounts && l.Target == "all" {
			why += ": its connections were not opened"
		} else {
			why += ": its share went to the running targets"
		}
		skipped = append(skipped, rundir.LoadSkip{Node: n.Name, Reason: why})
	}
	return targets, skipped
}

func skipList(s []rundir.LoadSkip) string {
	var out []string
	for _, k := range s {
		out = append(out, k.Node+": "+k.Reason)
	}
	return strings.Join(out, "; ")
}

// drained is how the wait for the mempools ended, for the log, the events
// and harvest.json.
type drained struct {
	node.Drained
	record *rundir.Drain
}

// drainMempools waits until every mempool is empty, for at most grace; when
// ctx is cancelled (before or during the wait) it goes on waiting, but no
// longer than interruptDrain from the start of the drain. It never fails:
// how it ended is in the result.
func drainMempools(ctx context.Context, win node.TxWindow, nodes []string, grace time.Duration, log io.Writer) drained {
	start := time.Now()
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			t := time.NewTimer(time.Until(start.Add(interruptDrain)))
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-done:
			}
		case <-done:
		}
	}()
	if ctx.Err() != nil {
		fmt.Fprintf(log, "interrupted: waiting up to %s for the mempools to drain (Ctrl-C again to quit at once)\n", min(grace, interruptDrain))
	}
	dr := win.Drain(dctx, nodes, grace)
	close(done)
	interrupted := ctx.Err() != nil
	bound := grace
	if interrupted {
		bound = min(grace, interruptDrain)
	}
	d := drained{Drained: dr, record: dr.Record(grace, bound, interrupted)}
	d.record.Nodes = append(d.record.Nodes, nodes...)
	fmt.Fprintf(log, "drain: %s\n", d)
	return d
}

func (d drained) String() string {
	s := d.Drained.String()
	if !d.record.Complete {
		s += fmt.Sprintf(" (interrupted; bound %.0f s): txs in no block are pending, not lost", d.record.BoundSec)
	}
	return s
}

// warmupTxs are the warm-up's txs, one per target, which the chain
// submits (TxChain.WarmUp). Warm-up txs carry their own run tag and are
// not in sent.csv, so they are never counted.
func warmupTxs(cfg load.Config, targets []load.Target) ([]node.Tx, error) {
	wcfg := cfg
	wcfg.RunID = cfg.RunID + "-warmup"
	wcfg.Workload = manifest.WorkloadKV // every app takes kv txs; accounts txs need their order
	codec, err := load.NewCodec(wcfg)
	if err != nil {
		return nil, err
	}
	txs := make([]node.Tx, len(targets))
	for i, t := range targets {
		txs[i] = node.Tx{Node: t.Node, Data: codec.Encode(uint64(i), time.Now())}
	}
	return txs, nil
}
