package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

// Gossip is `benchnet run` for a gossipsub testnet: up (every host peered
// with its planned neighbours) → collectors → warm-up → publish → cool-down
// → down (the hosts flush their traces) → analysis → report. Like Steady it leaves
// everything in the run directory as it happens and always tears down.
func Gossip(ctx context.Context, m *manifest.Manifest, opts Options) (out Outcome, err error) {
	opts = opts.withDefaults()
	if opts.Up.ReadyTimeout == 0 {
		opts.Up.ReadyTimeout = 2 * time.Minute
	}
	upStart := time.Now()
	tn, err := testnet.Up(ctx, m, opts.Up)
	if err != nil {
		return out, err
	}
	out.RunDir = tn.Dir.Path
	fmt.Fprintf(opts.Log, "%d hosts up and peered in %s\n", len(tn.Plan.Nodes), time.Since(upStart).Round(time.Millisecond))
	_ = tn.Dir.Event(rundir.EventGossipUp, "", time.Since(upStart).Round(time.Millisecond).String())
	faults, err := NewFaults(m, tn, opts.Log)
	if err != nil {
		return out, errors.Join(err, tn.Down(context.WithoutCancel(ctx)))
	}

	perr := gossipUp(ctx, tn, opts, faults)
	// Analysis and report after the teardown: the hosts have flushed their
	// traces, and the report is a pure function of the finished directory
	// (`benchnet analyze` and `benchnet report` later give the same).
	res, kind, aerr := analyze.Run(tn.Dir)
	if aerr != nil {
		return out, errors.Join(perr, aerr)
	}
	fmt.Fprint(opts.Log, kind.Summary(res))
	if faults != nil {
		if ferr := reportFaults(tn.Dir.Path, opts.Log); ferr != nil {
			perr = errors.Join(perr, fmt.Errorf("faults: %w", ferr))
		}
	}
	if opts.Judge != nil {
		perr = errors.Join(perr, opts.Judge(tn.Dir.Path))
	}
	files, rerr := report.Render(tn.Dir.Path, "")
	out.Report = files
	if rerr != nil {
		perr = errors.Join(perr, fmt.Errorf("report: %w", rerr))
	}
	return out, perr
}

// gossipUp is the part of Gossip while the hosts run (whileUp's frame:
// collector, exit watcher, teardown), faults (nil: none) run during the
// publish window.
func gossipUp(ctx context.Context, tn *testnet.Testnet, opts Options, faults *Faults) error {
	return whileUp(ctx, tn, opts, fmt.Sprintf(" (traces in %s)", tn.Dir.Join(rundir.GossipTraceDir)), func(func()) error {
		pub, ok := tn.Driver.(node.Publisher)
		if !ok {
			return fmt.Errorf("publish: node kind %q does not publish messages", tn.Plan.NodeKind())
		}
		sum, err := Publish(ctx, tn.Dir, tn.Plan, pub, opts.Log, faults)
		if sum != nil {
			if werr := tn.Dir.WriteLoad(sum); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		return err
	})
}

// Publish runs a gossip testnet's [publish] workload against hosts that are
// up, through the kind's driver: warm-up, the schedule, cool-down. It writes published.csv and returns
// the generator's summary (for load.json), harness CPU included in the log.
// faults (nil: none) run from the schedule's start to its end, their clock's
// zero the first publication's time, as a steady run's do over its load.
func Publish(ctx context.Context, dir *rundir.Dir, p *plan.Testnet, pub node.Publisher, log io.Writer, faults *Faults) (*rundir.LoadSummary, error) {
	if p.Publish == nil {
		return nil, fmt.Errorf("publish: the plan has no [publish] table (not a gossipsub testnet)")
	}
	cfg := *p.Publish
	var names []string
	byName := map[string]*plan.Node{}
	for _, n := range p.Nodes {
		names = append(names, n.Name)
		byName[n.Name] = n
	}
	sched, err := load.PublishSchedule(cfg, p.Seed, names)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "warm-up %s (meshes form over heartbeats)\n", cfg.Warmup.Duration)
	if err := sleep(ctx, cfg.Warmup.Duration); err != nil {
		return nil, err
	}
	publish := func(ctx context.Context, host, id string, size int) error {
		return pub.Publish(ctx, byName[host], id, size)
	}
	w, err := rundir.PublishedCSV.Create(rundir.PublishedCSV.Path(dir))
	if err != nil {
		return nil, err
	}
	w.StartFlushing(time.Second)
	fmt.Fprintf(log, "publishing %d messages of %d B at %v msg/s from %s\n", len(sched), cfg.Size, cfg.Rate, cfg.Source)
	_ = dir.Event(rundir.EventPublishStart, "", fmt.Sprintf("%d messages", len(sched)))
	cpu0, wall0 := selfCPU(), time.Now()
	start := time.Now().Add(100 * time.Millisecond)
	stopFaults := func() {}
	if faults != nil {
		// No fault of a gossip run ends it (a halt is a chain's); fail is
		// never called without a height poller.
		stopFaults = faults.Start(ctx, start, func(error) {})
	}
	sum, perr := load.RunPublish(ctx, nil, start, sched, cfg.Size, publish, w)
	cpu, wall := selfCPU()-cpu0, time.Since(wall0)
	stopFaults()
	if cerr := w.Close(); cerr != nil {
		perr = errors.Join(perr, cerr)
	}
	_ = dir.Event(rundir.EventPublishDone, "", "")
	if sum != nil && len(sum.Conns) == 1 {
		c := sum.Conns[0]
		fmt.Fprintf(log, "published %d (%d errors): %.1f msg/s of %.1f, lag p50 %.2f ms p99 %.2f ms max %.2f ms; harness CPU %.1f%% of one core\n",
			sum.OK, sum.SendErrors, c.Achieved, c.TargetRate, c.LagP50Ms, c.LagP99Ms, c.LagMaxMs, 100*cpu.Seconds()/wall.Seconds())
		if !sum.Valid {
			fmt.Fprintf(log, "INVALID RUN: %v\n", sum.Invalid)
		}
		_ = dir.Event(rundir.EventHarnessCPU, "", fmt.Sprintf("%.1f%% of one core while publishing", 100*cpu.Seconds()/wall.Seconds()))
	}
	if perr != nil {
		return sum, perr
	}
	fmt.Fprintf(log, "cool-down %s\n", cfg.Cooldown.Duration)
	return sum, sleep(ctx, cfg.Cooldown.Duration)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// selfCPU is this process's user + system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
