package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/promserver"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

// Options tune Steady.
type Options struct {
	Up             testnet.Options
	ScrapeInterval time.Duration // Prometheus and /proc sampling (default 1 s)
	// Prometheus also runs a real Prometheus server scraping every node, its
	// TSDB kept in the run directory (for Grafana).
	Prometheus bool
	// Preserve leaves the testnet up at the end (for debugging); `benchnet
	// down` removes it later.
	Preserve bool
	Log      io.Writer // stage lines for humans
	Progress io.Writer // the per-second progress line; nil: none
	// Judge, when set, is called on the run directory after the analysis
	// and before the report (the manifest's [thresholds]: it records them
	// in results.json); its error (a verdict) joins the run's.
	Judge func(runDir string) error
}

// Outcome is what a steady run leaves.
type Outcome struct {
	RunDir  string
	Results *rundir.Results // nil when the run failed before analysis
	Report  []string        // files the report wrote
}

// Steady is `benchnet run`: up → collectors → warm-up → load → drain →
// harvest → analyze → down → report. Everything is written to the run
// directory as it happens; on an interrupt or a failure after up it still
// analyzes what it has, renders the report and tears down.
func Steady(ctx context.Context, m *manifest.Manifest, opts Options) (out Outcome, err error) {
	// The workload is the kind's: messages its nodes publish (node.Publisher)
	// or txs its chain commits (node.TxChain).
	if d, err := node.New(m.Kind(), node.Config{}); err == nil {
		if _, ok := d.(node.Publisher); ok {
			return Gossip(ctx, m, opts)
		}
	}
	opts = opts.withDefaults()
	// Refuse a load the generator cannot build before a minute goes into up.
	if _, err := load.NewCodec(load.FromManifest(m.Load, "000000")); err != nil {
		return out, fmt.Errorf("load: %w", err)
	}
	// Delayed full and seed nodes join during the load, as they would in a
	// real network (Faults' height poller and the events show when).
	opts.Up.LateStarts = true
	tn, err := testnet.Up(ctx, m, opts.Up)
	if err != nil {
		return out, err
	}
	out.RunDir = tn.Dir.Path
	faults, err := NewFaults(m, tn, opts.Log)
	if err != nil {
		return out, errors.Join(err, tn.Down(context.WithoutCancel(ctx)))
	}
	res, merr := steadyUp(ctx, tn, opts, faults)
	out.Results = res
	// The report comes last, after the teardown, the collectors and
	// Prometheus have written their last events: it is then a pure function
	// of a finished run directory, and `benchnet report DIR` later gives the
	// same bytes. (With --preserve the nodes keep running, but only into
	// logs/ and homes/, which the report does not read.)
	if res != nil && opts.Judge != nil {
		merr = errors.Join(merr, opts.Judge(tn.Dir.Path))
	}
	if res != nil || ctx.Err() != nil {
		files, rerr := report.Render(tn.Dir.Path, "")
		if rerr != nil {
			merr = errors.Join(merr, fmt.Errorf("report: %w", rerr))
		}
		out.Report = files
	}
	return out, merr
}

// withDefaults fills in what a run leaves unset: no log, a 1 s scrape
// interval, and up logging where the run does.
func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.Up.Log == nil {
		o.Up.Log = o.Log
	}
	return o
}

// whileUp is the frame of every run while its testnet is up (Steady and
// Gossip): node exits recorded as they happen, the collector scraping every
// node, then body, and on the way out, whatever happens, the collector
// stopped and the testnet torn down (unless opts.Preserve). The teardown
// runs even when ctx was cancelled (an interrupt): it is what an
// interrupted run leaves behind. body may stop the collector itself before
// it returns (stopCollector is idempotent); downNote follows "testnet down"
// in the log.
func whileUp(ctx context.Context, tn *testnet.Testnet, opts Options, downNote string, body func(stopCollector func()) error) (err error) {
	bg := context.WithoutCancel(ctx)
	defer func() {
		if opts.Preserve {
			fmt.Fprintf(opts.Log, "testnet left up (--preserve): benchnet down %s\n", tn.Dir.Path)
			return
		}
		dctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		if derr := tn.Down(dctx); derr != nil {
			err = errors.Join(err, fmt.Errorf("down: %w", derr))
		} else {
			fmt.Fprintf(opts.Log, "testnet down%s\n", downNote)
		}
	}()

	watchDone := watchExits(tn, opts.Log)
	defer watchDone()

	stopCollector := StartCollector(ctx, tn.Dir, tn.Plan, func(node string) int { return tn.PIDs()[node] }, tn.Running,
		Machines(ctx, tn, opts.Log), opts.ScrapeInterval, opts.Log)
	defer stopCollector()

	return body(stopCollector)
}

// steadyUp is the part of Steady while the testnet is up: Prometheus when
// asked, measurement and summary, in whileUp's frame.
func steadyUp(ctx context.Context, tn *testnet.Testnet, opts Options, faults *Faults) (res *rundir.Results, err error) {
	err = whileUp(ctx, tn, opts, "", func(stopCollector func()) error {
		if opts.Prometheus {
			// Before the warm-up: Prometheus applies its targets ~5 s after start.
			ps, err := promserver.Start(ctx, tn.Dir.Path, promserver.TargetsFromPlan(tn.Plan), opts.Log)
			if err != nil {
				return fmt.Errorf("start prometheus: %w", err)
			}
			defer func() {
				if perr := ps.Stop(context.WithoutCancel(ctx)); perr != nil {
					fmt.Fprintf(opts.Log, "warning: prometheus: %v\n", perr)
				}
			}()
			fmt.Fprintf(opts.Log, "prometheus: %s (TSDB in %s)\n", ps.URL, ps.DataDir)
			_ = tn.Dir.Event(rundir.EventPrometheus, "", ps.URL)
		}

		var merr error
		res, merr = measure(ctx, tn.Dir, tn.Plan, tn.Plan.Load, tn.RunID, opts.Log, opts.Progress, faults, tn.NotStarted)
		stopCollector()
		if res != nil {
			fmt.Fprintln(opts.Log)
			fmt.Fprint(opts.Log, analyze.SummaryOf(tn.Plan.NodeKind(), res))
		}
		return merr
	})
	return res, err
}

// watchExits records nodes that die during the run as events and says so at
// once; the load keeps going and the summary accounts their txs.
func watchExits(tn *testnet.Testnet, log io.Writer) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case ex := <-tn.Runner.Exited():
				fmt.Fprintf(log, "\n%s %s exited during the run: %s\n", ex.Node, ex.Name, ex.Status)
				_ = tn.Dir.Event(rundir.EventNodeExited, ex.Node, ex.Name+": "+ex.Status)
			}
		}
	}()
	return func() { close(done); <-finished }
}
