package load

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Progress is a snapshot of a running load, for a progress line.
type Progress struct {
	Expected  int
	Attempted int // txs handed to a transport so far
	Done      int // records written to the sink
	Errors    int // send_error records
	Rejected  int
	Elapsed   time.Duration
	Conns     []ConnProgress
}

// ConnProgress is one connection's state.
type ConnProgress struct {
	Node      string
	Conn      int
	Attempted int
	Behind    int     // txs due but not yet sent
	LagMs     float64 // lag of the last send
}

// Runner is one load run. Progress may be called from any goroutine while
// Run runs.
type Runner struct {
	cfg      Config
	sink     Sink
	codec    Codec
	method   string
	sched    Schedule
	conns    []*connRun
	expected int

	t0                     atomic.Int64
	done, errors, rejected atomic.Int64
}

type connRun struct {
	plan      connPlan
	r         *Runner
	method    string
	out       chan<- rundir.Sent
	attempted atomic.Int64
	lastLag   atomic.Int64
}

// Run sends the configured load to targets and hands every record to sink.
// It returns when every tx was attempted and answered (or the drain ended);
// the error is non-nil when ctx was cancelled or the sink failed, with the
// Summary of what was done.
func Run(ctx context.Context, cfg Config, targets []Target, sink Sink) (rundir.LoadSummary, error) {
	r, err := NewRunner(cfg, targets, sink)
	if err != nil {
		return rundir.LoadSummary{}, err
	}
	return r.Run(ctx)
}

// NewRunner validates cfg and lays out the connections.
func NewRunner(cfg Config, targets []Target, sink Sink) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	plans, err := cfg.plan(targets)
	if err != nil {
		return nil, err
	}
	codec, err := NewCodec(cfg)
	if err != nil {
		return nil, err
	}
	m, _ := methodName(cfg.Method)
	r := &Runner{cfg: cfg, sink: sink, codec: codec, method: m, sched: cfg.schedule()}
	for _, p := range plans {
		r.conns = append(r.conns, &connRun{plan: p, r: r, method: m})
		r.expected += p.n
	}
	return r, nil
}

// Expected is the exact number of txs the run attempts.
func (r *Runner) Expected() int { return r.expected }

// build makes the tx of j at now and fills its hash and send time. The tx
// is built into buf when the codec can (buf is then the caller's to reuse
// once the tx is written out), else allocated.
func (c *connRun) build(j *job, now time.Time, buf []byte) []byte {
	var tx []byte
	if a, ok := c.r.codec.(appendEncoder); ok {
		tx = a.AppendEncode(buf[:0], j.rec.Seq, now)
	} else {
		tx = c.r.codec.Encode(j.rec.Seq, now)
	}
	j.rec.Hash = TxHash(tx)
	j.rec.SentAt = now.UnixNano()
	c.lastLag.Store(j.rec.SentAt - j.rec.Intended)
	return tx
}

// finish hands the completed record to the collector, exactly once per tx.
func (c *connRun) finish(j *job) { c.out <- j.rec }

// TxHash is CometBFT's tx hash: uppercase hex SHA-256 of the tx bytes.
func TxHash(tx []byte) string {
	const digits = "0123456789ABCDEF"
	h := sha256.Sum256(tx)
	var out [64]byte
	for i, b := range h {
		out[2*i], out[2*i+1] = digits[b>>4], digits[b&15]
	}
	return string(out[:])
}

// collectNap is how long the collector naps when the channel runs empty (or
// after collectBatch records): the delay it adds to a record's accounting.
const (
	collectNap   = 50 * time.Millisecond
	collectBatch = 4096
)

// Run executes the load once.
func (r *Runner) Run(ctx context.Context) (rundir.LoadSummary, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	records := make(chan rundir.Sent, 1<<16)
	stats := make([]ConnMeter, len(r.conns))
	var sinkErr error
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		// Records are taken in batches, a nap apart, rather than one wake-up
		// of this goroutine per tx: at 1400 tx/s that is 1400 scheduler
		// round trips a second the harness no longer pays, and the channel
		// (64 Ki records) holds far more than a nap's worth.
		n := 0
		for rec := range records {
			if n++; n%collectBatch == 0 || len(records) == 0 {
				time.Sleep(collectNap)
			}
			stats[rec.Conn].Add(&rec)
			switch rec.Result {
			case rundir.ResultSendError:
				r.errors.Add(1)
			case rundir.ResultRejected:
				r.rejected.Add(1)
			}
			r.done.Add(1)
			if sinkErr == nil {
				if err := r.sink.Sent(rec); err != nil {
					sinkErr = fmt.Errorf("load: sink: %w", err)
					cancel(sinkErr)
				}
			}
		}
	}()

	// Connect every connection before t0, so the first ticks do not pay for
	// the dial. A failed dial is not fatal: its txs become send_error rows
	// while the transport retries with backoff.
	clk := r.cfg.clock
	_, real := clk.(realClock)
	rt := real && !r.cfg.Ordinary
	// Plain websockets on the real clock are served by the pacing thread's
	// event loop (evloop.go); TLS and fake clocks use gorilla's.
	var loop *evLoop
	if r.cfg.Transport != "http" && real {
		loop, _ = newEvLoop() // no epoll: gorilla's transport
	}
	trs := make([]transport, len(r.conns))
	var wg sync.WaitGroup
	for k, c := range r.conns {
		c.out = records
		if r.cfg.Transport == "http" {
			trs[k] = newHTTP(c.plan.target.rpc(), r.cfg.InFlight)
			continue
		}
		rpc := c.plan.target.rpc()
		if loop != nil && strings.HasPrefix(wsURL(rpc()), "ws://") {
			if lc, err := loop.add(func() string { return wsURL(rpc()) }); err == nil {
				trs[k] = lc
				wg.Add(1)
				go func() { defer wg.Done(); _ = lc.connect(ctx) }()
				continue
			}
		}
		ws := newWS(rpc)
		trs[k] = ws
		wg.Add(1)
		go func() { defer wg.Done(); ws.sess = ws.connect(ctx) }()
	}
	wg.Wait()

	if rt {
		raiseHarness()
		defer raiseGC()()
	}
	t0 := clk.Now().Add(5 * time.Millisecond)
	r.t0.Store(t0.UnixNano())
	var paceErr error
	var once sync.Once
	// The drain runs even after a cancel (first Ctrl-C stops and drains),
	// bounded by its own timeout from the last send.
	drainCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeoutCause(context.WithoutCancel(ctx), r.cfg.Drain, fmt.Errorf("drain timeout %v", r.cfg.Drain))
	}
	drain := func(k int) {
		dctx, stop := drainCtx()
		defer stop()
		trs[k].drain(dctx)
	}
	send := func(k, i int, due time.Time) {
		c := r.conns[k]
		c.attempted.Add(1)
		trs[k].send(ctx, &job{c: c, rec: rundir.Sent{
			Seq: c.plan.seq0 + uint64(i), Conn: c.plan.idx, Node: c.plan.target.Node, Intended: due.UnixNano(),
		}})
	}
	if r.cfg.Transport != "http" {
		// Websocket sends never wait for an answer (the event loop, and
		// gorilla's transport below its write timeout, queue what the
		// socket does not take), so one goroutine paces every connection:
		// one wake-up per tick, not one per connection.
		ns := make([]int, len(r.conns))
		for k, c := range r.conns {
			ns[k] = c.plan.n
		}
		var y *yielder
		next := make([]int, len(r.conns))
		paced := make(chan struct{})
		go func() {
			defer close(paced)
			if rt {
				pacingThread()
				y = newYielder(time.Now())
			}
			pclk := clk
			if loop != nil {
				pclk = loop
			}
			_, err := PaceAll(ctx, pclk, t0, r.sched, ns, func(k, i int, due time.Time) {
				send(k, i, due)
				if rt {
					next[k] = i + 1
					if d, ok := nextDue(t0, r.sched, ns, next); ok {
						y.after(time.Now(), d)
					}
				}
			})
			if err != nil {
				paceErr = fmt.Errorf("load: %w", err)
			}
			if loop != nil {
				dctx, stop := drainCtx()
				loop.drain(dctx) // on the pacing thread, like the sends
				stop()
			}
		}()
		<-paced
		for k := range r.conns {
			wg.Add(1)
			go func() { defer wg.Done(); drain(k) }()
		}
	} else {
		// An HTTP send waits when its connection's workers are all busy:
		// one pacer per connection, so that stalls only its own schedule.
		for k, c := range r.conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var y *yielder
				if rt {
					pacingThread()
					y = newYielder(time.Now())
				}
				_, err := Pace(ctx, clk, t0, r.sched, c.plan.n, func(i int, due time.Time) {
					send(k, i, due)
					if rt {
						y.after(time.Now(), t0.Add(r.sched.Offset(i+1)))
					}
				})
				if err != nil {
					once.Do(func() { paceErr = fmt.Errorf("load: connection %d: %w", c.plan.idx, err) })
				}
				drain(k)
			}()
		}
	}
	wg.Wait()
	close(records)
	<-collected

	s := r.summarize(t0, stats, trs)
	switch {
	case sinkErr != nil:
		return s, sinkErr
	case paceErr != nil:
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			return s, fmt.Errorf("%w (%v)", paceErr, c)
		}
		return s, paceErr
	}
	return s, nil
}

// blocker is a transport that measures the node's backpressure.
type blocker interface{ backpressure() time.Duration }

func (r *Runner) summarize(t0 time.Time, stats []ConnMeter, trs []transport) rundir.LoadSummary {
	s := rundir.LoadSummary{RunID: r.cfg.RunID, Start: t0, Expected: r.expected, Valid: true}
	var end int64
	for k, c := range r.conns {
		cs, why := stats[k].Summary(c.plan.target.Node, c.plan.idx, c.plan.n)
		if b, ok := trs[k].(blocker); ok {
			cs.BlockedS = b.backpressure().Seconds()
			if why != "" && cs.BlockedS > 0 {
				why += BlockedNote(cs.BlockedS)
			}
		}
		if why != "" {
			s.Invalid = append(s.Invalid, why)
		}
		end = max(end, stats[k].lastSent)
		s.Attempted += cs.Attempted
		s.Rejected += cs.Rejected
		s.SendErrors += cs.Errors
		s.Conns = append(s.Conns, cs)
	}
	if end > 0 {
		s.End = time.Unix(0, end)
	}
	s.Sent = s.Attempted - s.SendErrors
	s.OK = s.Sent - s.Rejected
	s.Valid = len(s.Invalid) == 0
	return s
}

// Progress returns a snapshot; safe to call concurrently with Run.
func (r *Runner) Progress() Progress {
	p := Progress{Expected: r.expected, Done: int(r.done.Load()), Errors: int(r.errors.Load()), Rejected: int(r.rejected.Load())}
	t0 := r.t0.Load()
	if t0 != 0 {
		p.Elapsed = r.cfg.clock.Now().Sub(time.Unix(0, t0))
	}
	for _, c := range r.conns {
		a := int(c.attempted.Load())
		cp := ConnProgress{Node: c.plan.target.Node, Conn: c.plan.idx, Attempted: a, LagMs: ms(c.lastLag.Load())}
		if p.Elapsed > 0 {
			due := min(c.plan.n, TicksWithin(r.sched, p.Elapsed+1))
			cp.Behind = max(due-a, 0)
		}
		p.Attempted += a
		p.Conns = append(p.Conns, cp)
	}
	return p
}
