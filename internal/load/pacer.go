package load

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/osched"
)

// Schedule gives the send time of every tx of one connection as an offset
// from the connection's start t0. It is a pure function of the tx index, so a
// late sender never shifts the ticks after it (open loop, k6's arrival-rate
// model): it only sends the ticks that are already due, in order.
type Schedule interface {
	// Offset is when tx i (0-based) is due, relative to t0.
	Offset(i int) time.Duration
	// Rate is the instantaneous target rate (tx/s) at tx i.
	Rate(i int) float64
}

// Constant is r tx/s: tx i is due at i/r.
type Constant struct{ R float64 }

func (c Constant) Offset(i int) time.Duration { return secs(float64(i) / c.R) }
func (c Constant) Rate(int) float64           { return c.R }

// Ramp rises linearly from From to To tx/s over D, then stays at To.
// The count of ticks due by time t is the integral N(t) = From·t + k·t²
// with k = (To−From)/(2D), so tx i is due at the root of N(t) = i, solved
// exactly (no per-tick accumulation error).
type Ramp struct {
	From, To float64
	D        time.Duration
}

func (r Ramp) k() float64 { return (r.To - r.From) / (2 * r.D.Seconds()) }

// Offset solves k·t² + From·t − i = 0 for t ≥ 0, in the form
// t = 2i / (From + sqrt(From² + 4ki)) that stays exact when k → 0 or From = 0.
func (r Ramp) Offset(i int) time.Duration {
	if i <= 0 {
		return 0
	}
	x := float64(i)
	d := r.D.Seconds()
	total := r.From*d + r.k()*d*d // ticks due within the ramp
	if x > total {
		return r.D + secs((x-total)/r.To)
	}
	return secs(2 * x / (r.From + math.Sqrt(r.From*r.From+4*r.k()*x)))
}

func (r Ramp) Rate(i int) float64 {
	t := r.Offset(i)
	if t >= r.D {
		return r.To
	}
	return r.From + (r.To-r.From)*t.Seconds()/r.D.Seconds()
}

// TicksWithin is how many ticks of s fall in [0, d): the per-connection tx
// count of a duration-bounded run. For a constant rate this is ceil(r·d)
// (= r·d for the QA method's integer r and d), for a ramp the ceiling of the
// integral of the rate over d.
func TicksWithin(s Schedule, d time.Duration) int {
	var area float64
	switch s := s.(type) {
	case Constant:
		area = s.R * d.Seconds()
	case Ramp:
		dd := math.Min(d.Seconds(), s.D.Seconds())
		area = s.From*dd + s.k()*dd*dd
		if d > s.D {
			area += s.To * (d - s.D).Seconds()
		}
	default:
		n := 0
		for s.Offset(n) < d {
			n++
		}
		return n
	}
	// Tolerate float noise so that 1000 tx/s × 10 s is 10000, not 10001.
	return int(math.Ceil(area - 1e-9))
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Clock is the pacer's time source. The real one sleeps precisely; tests use
// a fake that jumps, so schedules and catch-up are checked exactly.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once Now() >= t (never earlier), or ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

// maxNap bounds one nanosleep so that a cancelled context is seen within it.
// The pacer sleeps with nanosleep(2) only, never a Go timer: Go timers can
// wake up to ~1 ms late (the netpoller sleeps in whole milliseconds) and are
// fired by whichever ordinary thread runs the scheduler, which starves with
// the rest of the machine, while the pacing thread itself is real-time (see
// pacingThread). nanosleep blocks only this goroutine's thread and wakes
// within its timer slack, without burning a core the way spinning does: the
// harness shares the machine with the nodes it measures.
const maxNap = 20 * time.Millisecond

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	return napUntil(ctx, t, func(d time.Duration) {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		if err := unix.Nanosleep(&ts, nil); err != nil && err != unix.EINTR {
			runtime.Gosched() // no nanosleep: fall back to yielding
		}
	})
}

// napUntil calls nap with at most maxNap until t has passed (never
// returning earlier) or ctx ends: a real clock's sleep, whatever it sleeps in.
func napUntil(ctx context.Context, t time.Time, nap func(time.Duration)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		nap(min(d, maxNap))
	}
}

// pacingThread makes the calling goroutine's thread the one the machine
// starves last: locked to the goroutine (never unlocked, so the thread dies
// with it and its policy serves nothing else), 1 ns timer slack, and
// SCHED_FIFO at the lowest real-time priority, so a wake-up preempts the
// nodes under test and any neighbour at once. The pacer never spins (it
// sleeps in nanosleep between ticks), and the kernel's real-time throttling
// bounds it anyway. Best effort: without CAP_SYS_NICE it stays an ordinary
// thread, and the lag in load.json shows what that cost.
func pacingThread() {
	osched.LockThread()
	_ = osched.SetRealtime()
}

// HarnessNice is the nice value a real-time run gives every thread of the
// harness process. The pacing thread is real-time, but the goroutine it runs
// is handed back to it by the Go scheduler's ordinary threads whenever it
// was preempted or its P taken (see yielder), and the websocket readers,
// collectors and GC run there too: at nice 0 they queue behind any busy
// neighbour (a compile, another run) for milliseconds, which showed as lag.
// At -10 they weigh 9548 against a neighbour's 1024 and the nodes' 335
// (nice 5): they run first, and use about a tenth of a core.
const HarnessNice = -10

// raiseHarness gives the process HarnessNice at the start of every
// real-time run (best effort: without CAP_SYS_NICE the lag in load.json
// shows what that cost). It is not undone: the harness stays ahead of the
// nodes it started for as long as it lives.
func raiseHarness() { _ = osched.RaiseProcess(HarnessNice) }

// yieldEvery is how often a pacing goroutine gives its P back of its own
// accord, at a moment with slack before its next tick. The Go scheduler
// preempts a goroutine that has kept its P for 10 ms (sysmon's
// forcePreemptNS, whether it was running or sleeping in a system call);
// for a goroutine locked to a thread that means going through the global
// run queue until an ordinary thread hands it back (four context switches
// over two threads), wherever the schedule is. Yielding a little before,
// when the next tick is at least yieldSlack away, moves that round trip to
// where it costs no lag, and no more often than the scheduler would force
// it (every 4 ms cost 11 % of the harness's CPU in a perf profile at
// 2x700 tx/s).
const (
	yieldEvery = 8 * time.Millisecond
	yieldSlack = 400 * time.Microsecond
)

// yielder decides when a pacing goroutine yields (see yieldEvery).
type yielder struct {
	last  time.Time
	yield func() time.Time // runtime.Gosched, then the time after it
}

func newYielder(now time.Time) *yielder {
	return &yielder{last: now, yield: func() time.Time { runtime.Gosched(); return time.Now() }}
}

// after is called after a send at now, with the next tick's due time.
func (y *yielder) after(now, next time.Time) {
	if now.Sub(y.last) >= yieldEvery && next.Sub(now) >= yieldSlack {
		y.last = y.yield()
	}
}

// gcPercent raises the GC target while runs are in progress: a run
// allocates a few MiB/s over a live heap of a few MiB, so at the default
// (100) the collector ran every second or two, and every cycle's assists
// and stop-the-world phases fall on the senders.
var gcPercent struct {
	sync.Mutex
	runs, prev int
}

const runGCPercent = 400

func raiseGC() (undo func()) {
	gcPercent.Lock()
	defer gcPercent.Unlock()
	if gcPercent.runs == 0 {
		gcPercent.prev = debug.SetGCPercent(runGCPercent)
		if gcPercent.prev < 0 || gcPercent.prev > runGCPercent { // GOGC=off or higher: keep the user's
			debug.SetGCPercent(gcPercent.prev)
		}
	}
	gcPercent.runs++
	return func() {
		gcPercent.Lock()
		defer gcPercent.Unlock()
		if gcPercent.runs--; gcPercent.runs == 0 {
			debug.SetGCPercent(gcPercent.prev)
		}
	}
}

// GOMAXPROCS is left alone. Runs used to add a P per pacing thread, so
// that a thread waking from its sleep found its P still there; with spare
// Ps every goroutine wake-up also woke an idle runtime thread to spin for
// work, and at 2x700 tx/s on the quickstart the harness used 12.1 and 14.3 %
// of a core with them against 9.8 and 9.8 % without (interleaved runs, lag
// p99 0.10-0.18 ms either way).

// Pace calls send(i, due) for i = 0..n−1 in order, each no earlier than
// t0 + s.Offset(i). A sender that falls behind (slow send, GC pause, full
// in-flight pool) sends every tx already due back to back: nothing is
// dropped and nothing goes early. It returns ctx's error if cancelled, with
// the number of txs sent so far.
func Pace(ctx context.Context, clk Clock, t0 time.Time, s Schedule, n int, send func(i int, due time.Time)) (int, error) {
	for i := 0; i < n; i++ {
		due := t0.Add(s.Offset(i))
		if clk.Now().Before(due) {
			if err := clk.SleepUntil(ctx, due); err != nil {
				return i, fmt.Errorf("pacer stopped at tx %d of %d: %w", i, n, err)
			}
		} else if err := ctx.Err(); err != nil {
			return i, fmt.Errorf("pacer stopped at tx %d of %d: %w", i, n, err)
		}
		send(i, due)
	}
	return n, nil
}

// PaceAll is Pace for several connections on one schedule from one t0, in
// one goroutine: connection k's tx i is sent no earlier than
// t0 + s.Offset(i), connections in order of due time (ties by k). With
// every connection on the same schedule their ticks coincide, so one
// thread wakes once per tick for all of them instead of one thread per
// connection each waking for its own: at 2x700 tx/s that halves the
// nanosleeps and context switches that were a third of the harness's CPU.
// sent[k] is how many of connection k's txs were sent; the error is ctx's.
func PaceAll(ctx context.Context, clk Clock, t0 time.Time, s Schedule, ns []int, send func(k, i int, due time.Time)) (sent []int, err error) {
	sent = make([]int, len(ns))
	for {
		// The connection due first: an O(connections) scan per tick,
		// which is cheap next to a send for the counts a run uses.
		k := -1
		var due time.Time
		for j, n := range ns {
			if sent[j] >= n {
				continue
			}
			if d := t0.Add(s.Offset(sent[j])); k < 0 || d.Before(due) {
				k, due = j, d
			}
		}
		if k < 0 {
			return sent, nil
		}
		if clk.Now().Before(due) {
			if err := clk.SleepUntil(ctx, due); err != nil {
				return sent, fmt.Errorf("pacer stopped at tx %d of %d of connection %d: %w", sent[k], ns[k], k, err)
			}
		} else if err := ctx.Err(); err != nil {
			return sent, fmt.Errorf("pacer stopped at tx %d of %d of connection %d: %w", sent[k], ns[k], k, err)
		}
		send(k, sent[k], due)
		sent[k]++
	}
}

// nextDue is the earliest due time of an unsent tx in PaceAll's state
// (ok false when all are sent): the yielder's look-ahead.
func nextDue(t0 time.Time, s Schedule, ns, sent []int) (time.Time, bool) {
	var due time.Time
	ok := false
	for j, n := range ns {
		if sent[j] >= n {
			continue
		}
		if d := t0.Add(s.Offset(sent[j])); !ok || d.Before(due) {
			due, ok = d, true
		}
	}
	return due, ok
}
