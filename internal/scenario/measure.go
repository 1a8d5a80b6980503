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
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/cometrpc"
	"github.com/benchnet/benchnet/internal/harvest"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
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
func Measure(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, runID string, log, progressOut io.Writer) (*analyze.Results, error) {
	return MeasureLoad(ctx, dir, p, p.Load, runID, log, progressOut)
}

// MeasureLoad is Measure with the load given rather than read from the
// plan: one measurement of an experiment (a sweep cell, a search probe).
func MeasureLoad(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer) (*analyze.Results, error) {
	return measure(ctx, dir, p, l, runID, log, progressOut, nil, nil)
}

// MeasureRunning is MeasureLoad on a testnet where some nodes may not run:
// notStarted (nil: every node runs) names them at any moment (a [rotate]
// group `benchnet up` never started, a late start not yet due). See
// measure for what leaves them out.
func MeasureRunning(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer, notStarted func(string) bool) (*analyze.Results, error) {
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
func measure(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, l manifest.Load, runID string, log, progressOut io.Writer, faults *Faults, notStarted func(string) bool) (*analyze.Results, error) {
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	cfg := load.FromManifest(l, runID)
	cfg.Seed = p.Seed
	running := func(name string) bool { return notStarted == nil || !notStarted(name) }
	targets, skipped := loadTargets(p, l, running)
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
		_ = dir.Event("load_target_skipped", s.Node, s.Reason)
	}
	nodes := slices.DeleteFunc(harvest.Nodes(p), func(n harvest.Node) bool { return !running(n.Name) })

	// The warm-up proves every node commits txs before the clock starts
	// (every node that keeps the chain: a seed's height waits for its
	// next crawl and no tx goes through it).
	if err := warmUp(ctx, cfg, targets, chainNodes(p, nodes), l.Warmup.Duration, log); err != nil {
		return nil, err
	}
	_ = dir.Event("warmup_done", "", "")

	// Blocks at or below the harvest node's current height were sealed before
	// the first run tx existed, so the run's range starts just above it.
	hv, from, err := harvestNode(ctx, p)
	if err != nil {
		return nil, err
	}
	from++

	pctx, stopPoll := context.WithCancel(context.WithoutCancel(ctx))
	poller := harvest.NewMempoolPoller(dir.Path, harvest.Nodes(p), 500*time.Millisecond)
	poller.Running = running
	pollDone := make(chan struct{})
	go func() { defer close(pollDone); _, _ = poller.Run(pctx) }()
	defer func() { stopPoll(); <-pollDone }()

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
	_ = dir.Event("load_start", "", fmt.Sprintf("%d txs", runner.Expected()))
	prog := newProgress(progressOut, runner, hv, poller)
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
	_ = dir.Event("load_done", "", fmt.Sprintf("sent %d, send errors %d", sum.Sent, sum.SendErrors))
	sum.Skipped = skipped
	_ = dir.WriteLoad(&sum)
	interrupted := ctx.Err() != nil
	if loadErr != nil && !interrupted {
		return nil, fmt.Errorf("load: %w", loadErr)
	}

	// Every node running now, late joiners included.
	nodes = slices.DeleteFunc(harvest.Nodes(p), func(n harvest.Node) bool { return !running(n.Name) })
	drain := drainMempools(ctx, faults.answering(nodes), l.Grace.Duration, log)
	_ = dir.Event("drained", "", drain.String())

	fctx := ctx
	if ctx.Err() != nil {
		interrupted = true
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		fmt.Fprintf(log, "interrupted: harvesting what was sent (at most %s)\n", finishTimeout)
	}
	st, err := cometrpc.New(hv.URL).Status(fctx)
	if err != nil {
		return nil, fmt.Errorf("harvest: %s: %w", hv.Name, err)
	}
	if _, err := harvest.HarvestWith(fctx, hv.URL, from, st.Height, dir.Path, harvest.Options{Drain: drain.record}); err != nil {
		return nil, fmt.Errorf("harvest blocks %d..%d from %s: %w", from, st.Height, hv.Name, err)
	}
	res, err := analyze.Analyze(dir.Path)
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

// chainNodes are nodes without p's seeds.
func chainNodes(p *plan.Testnet, nodes []harvest.Node) []harvest.Node {
	seed := map[string]bool{}
	for _, n := range p.Nodes {
		seed[n.Name] = n.Role == "seed"
	}
	return slices.DeleteFunc(slices.Clone(nodes), func(n harvest.Node) bool { return seed[n.Name] })
}

// loadTargets is where the load goes: the validators (kv) or the
// validators and full nodes (accounts), those running now; skipped are the
// others, with the reason.
func loadTargets(p *plan.Testnet, l manifest.Load, running func(string) bool) (targets []load.Target, skipped []rundir.LoadSkip) {
	loadNodes := p.Validators()
	if l.Workload == manifest.WorkloadAccounts { // validators and full nodes
		loadNodes = slices.DeleteFunc(slices.Clone(p.Nodes), func(n *plan.Node) bool { return n.Role == "seed" })
	}
	for _, n := range loadNodes {
		if running(n.Name) {
			targets = append(targets, load.Target{Node: n.Name, RPCURL: n.RPCURL()})
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
	harvest.DrainResult
	record *rundir.Drain
}

// drainMempools waits until every mempool is empty, for at most grace; when
// ctx is cancelled (before or during the wait) it goes on waiting, but no
// longer than interruptDrain from the start of the drain. It never fails:
// how it ended is in the result.
func drainMempools(ctx context.Context, nodes []harvest.Node, grace time.Duration, log io.Writer) drained {
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
	dr, _ := harvest.Drain(dctx, nodes, grace)
	close(done)
	interrupted := ctx.Err() != nil
	bound := grace
	if interrupted {
		bound = min(grace, interruptDrain)
	}
	d := drained{DrainResult: dr, record: dr.Record(grace, bound, interrupted)}
	for _, n := range nodes {
		d.record.Nodes = append(d.record.Nodes, n.Name)
	}
	fmt.Fprintf(log, "drain: %s\n", d)
	return d
}

func (d drained) String() string {
	s := d.DrainResult.String()
	if !d.record.Complete {
		s += fmt.Sprintf(" (interrupted; bound %.0f s): txs in no block are pending, not lost", d.record.BoundSec)
	}
	return s
}

// harvestNode picks the first validator that answers, and its height.
func harvestNode(ctx context.Context, p *plan.Testnet) (harvest.Node, int64, error) {
	var errs []error
	for _, n := range p.Validators() {
		st, err := cometrpc.New(n.RPCURL()).Status(ctx)
		if err == nil {
			return harvest.Node{Name: n.Name, URL: n.RPCURL()}, st.Height, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
	}
	return harvest.Node{}, 0, fmt.Errorf("no validator answers RPC: %w", errors.Join(errs...))
}

// warmUp sends one tx to every target and waits until every node has moved
// two blocks past it with an empty mempool: then each warm-up tx is
// committed on every node. Warm-up txs carry their own run tag and are not in
// sent.csv, so they are never counted.
func warmUp(ctx context.Context, cfg load.Config, targets []load.Target, nodes []harvest.Node, limit time.Duration, log io.Writer) error {
	if limit <= 0 {
		return nil
	}
	start := time.Now()
	// The txs are committed everywhere two blocks past top: on a slow chain
	// (a candidate that regressed to 3 s blocks) a fixed limit would fail
	// the harness, not the build. The limit stretches to 4 block intervals,
	// as the chain's recent blocks and the heights seen here show them;
	// ctx's outer bound is 10 times the limit.
	ctx, cancel := context.WithTimeout(ctx, 10*limit)
	defer cancel()
	wcfg := cfg
	wcfg.RunID = cfg.RunID + "-warmup"
	wcfg.Workload = manifest.WorkloadKV // every app takes kv txs; accounts txs need their order
	codec, err := load.NewCodec(wcfg)
	if err != nil {
		return err
	}
	var top int64
	for i, t := range targets {
		code, msg, err := load.Broadcast(ctx, t.RPCURL, "broadcast_tx_sync", codec.Encode(uint64(i), time.Now()))
		if err != nil {
			return fmt.Errorf("warm-up: %s unreachable: %w", t.Node, err)
		}
		if code != 0 {
			return fmt.Errorf("warm-up: %s rejected a tx (code %d): %s", t.Node, code, msg)
		}
	}
	clients := make([]*cometrpc.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = cometrpc.New(n.URL)
		st, err := clients[i].Status(ctx)
		if err != nil {
			return fmt.Errorf("warm-up: %s: %w", n.Name, err)
		}
		top = max(top, st.Height)
	}
	var seen []cometrpc.BlockMeta // heights as first seen on the first node, and when
	if metas, err := clients[0].BlockMetas(ctx, max(2, top-4), top); err == nil {
		seen = metas
	}
	wait, told := limit, false
	for {
		ready := true
		for i, c := range clients {
			st, err := c.Status(ctx)
			if err == nil && i == 0 && (len(seen) == 0 || st.Height > seen[len(seen)-1].Height) {
				seen = append(seen, cometrpc.BlockMeta{Height: st.Height, Time: time.Now()})
			}
			if err != nil || st.Height < top+2 {
				ready = false
				break
			}
			if size, err := c.MempoolSize(ctx); err != nil || size > 0 {
				ready = false
				break
			}
		}
		if ready {
			fmt.Fprintf(log, "warm-up: %d tx(s) committed on all %d nodes in %s\n", len(targets), len(nodes), time.Since(start).Round(time.Millisecond))
			return nil
		}
		if w := warmupLimit(limit, seen); w > wait {
			wait = w
			if !told {
				fmt.Fprintf(log, "warm-up: blocks take %s here: waiting up to %s (load.warmup %s)\n",
					blockInterval(seen).Round(time.Millisecond), min(wait, 10*limit).Round(time.Second), limit)
				told = true
			}
		}
		if time.Since(start) >= wait {
			return fmt.Errorf("warm-up: txs not committed on every node within %s (load.warmup)", wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("warm-up: txs not committed on every node within %s (load.warmup)", 10*limit)
			}
			return context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// blockInterval is the mean interval between the metas' blocks (ascending),
// 0 when fewer than two.
func blockInterval(metas []cometrpc.BlockMeta) time.Duration {
	if len(metas) < 2 {
		return 0
	}
	return metas[len(metas)-1].Time.Sub(metas[0].Time) / time.Duration(len(metas)-1)
}

// warmupLimit is the warm-up's limit stretched to 4 block intervals when the
// chain is slower than the limit allows for.
func warmupLimit(limit time.Duration, metas []cometrpc.BlockMeta) time.Duration {
	return max(limit, 4*blockInterval(metas))
}
