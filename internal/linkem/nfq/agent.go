package nfq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/osched"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Link is the emulation of the node's traffic to one destination (an
// address or a subnet): what netem on the sender's egress would do.
type Link struct {
	// Name labels the link's counters (the port label of counters.prom,
	// e.g. the destination node); default the prefix (or Host).
	Name   string
	Prefix netip.Prefix
	// Host, instead of Prefix, is a destination by DNS name (a swarm
	// node's alias on the overlay, whose address changes when its task
	// does): the agent resolves it, again every ResolveEvery and soon
	// after a packet to a Capture address matched no link. Its packets
	// reach the queue only through Config.Capture.
	Host   string
	Delay  time.Duration // one-way
	Jitter time.Duration // standard deviation of a normal term added to Delay
	Loss   float64       // probability, 0..1
	// Rate paces the link in bits/s (0: unlimited) through a drop-tail
	// queue of QueueBytes (default linkem.QueueBytesFor(Rate)).
	Rate       uint64
	QueueBytes int
}

// Config configures an agent.
type Config struct {
	Queue uint16
	Links []Link
	// Rate, if set, paces all the node's emulated traffic in bits/s before
	// the links do (the model's Endpoint.Rate: a node's egress), through a
	// drop-tail queue of QueueBytes (default linkem.QueueBytesFor(Rate)).
	Rate       uint64
	QueueBytes int
	// Seed seeds the loss and jitter draws.
	Seed uint64
	// Realtime runs the verdict thread under SCHED_FIFO (lowest real-time
	// priority) when privileged, as the userspace switch's delivery thread.
	Realtime bool
	// Conn is how the queue is bound (ConnConfig.Queue is Queue).
	Conn ConnConfig
	// Capture are prefixes queued besides the links' own (Prefixes): the
	// network the Host links' addresses are in (the overlay's subnet).
	Capture []netip.Prefix
	// Resolver resolves Host links (default net.DefaultResolver).
	Resolver *net.Resolver
	// Ingress holds arriving packets (input hook), each by the link of its
	// source: Links then name the peers whose traffic to this node they
	// carry. A packet held on egress still belongs to its sender's socket,
	// and TCP Small Queues lets a socket have only about a millisecond of
	// its pacing rate below it: a 60 ms egress delay held one TCP flow to
	// 0.22 MB/s, where the same delay on arrival passed 22 MB/s (veth
	// namespaces, 2026-12-01), and a loaded chain stalled on swarm. On a
	// real path the NIC frees the packet before its propagation delay.
	// Rate (a node's egress) is refused with it.
	Ingress bool
}

// Re-resolution of Host links: every ResolveEvery once all resolved,
// every resolvePending while some is not (its task not started yet), and
// after a miss (a packet to a Capture address no link matched) at most
// every resolveMissGap.
var (
	ResolveEvery   = 30 * time.Second
	resolvePending = 2 * time.Second
	resolveMissGap = 5 * time.Second
)

// Agent holds the verdicts of one queue. Packets whose destination no link
// covers are accepted at once and counted under the port "other".
type Agent struct {
	cfg   Config
	conn  *Conn
	epoch time.Time
	// tab is the link table in force (SetTable swaps it); queued are the
	// prefixes the rules installed at Start queue.
	tab    atomic.Pointer[table]
	queued []netip.Prefix
	setMu  sync.Mutex // one SetTable at a time
	ports  ports
	missc  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc

	sched linkem.Scheduler[held]
	wait  *linkem.Waiter
	late  linkem.LatHist
	tid   atomic.Int32

	// Owned by the receiver.
	rng      *rand.Rand
	nextFree int64 // egress virtual clock, ns since epoch

	recvErrors, enobufs, verdictErrors, sendErrors atomic.Uint64

	stop    atomic.Bool
	wg      sync.WaitGroup
	closeMu sync.Mutex
	closed  bool
	errc    chan error
}

type link struct {
	Link
	*counters
	nextFree int64 // owned by the receiver
}

// held is a packet whose verdict waits for its time.
type held struct {
	id   uint32
	size int32
	l    *link
}

// Procs is the GOMAXPROCS an agent process runs with: more Ps than the
// threads that ever run Go code at once, so the verdict thread, woken from
// its ppoll, always finds an idle P and never waits behind the receiver or
// the GC for the runtime's 10 ms time slice (the OS, where it runs
// real-time, decides instead). Measured: with GOMAXPROCS 2 beside a busy
// receiver, p99 lateness was 13.5 ms at 5000 pkt/s.
func Procs() int { return max(8, 2*runtime.NumCPU()) }

// Start binds the queue and starts the agent's two threads: the receiver,
// which classifies each packet and schedules its verdict, and the verdict
// thread, which sends verdicts when they are due. Install the rules that
// feed the queue after Start (InstallRules); Close the agent.
func Start(cfg Config) (*Agent, error) {
	a, err := newAgent(cfg)
	if err != nil {
		return nil, err
	}
	w, err := linkem.NewWaiter()
	if err != nil {
		a.cancel()
		return nil, fmt.Errorf("nfq: %w", err)
	}
	a.wait, a.sched.Wake = w, w.Wake
	cc := cfg.Conn
	cc.Queue = cfg.Queue
	if a.conn, err = Open(cc); err != nil {
		a.cancel()
		_ = w.Close()
		return nil, err
	}
	a.wg.Add(2)
	go func() { defer a.wg.Done(); a.receive() }()
	go func() { defer a.wg.Done(); a.deliver() }()
	if len(cfg.Capture) > 0 { // Host links may come with a later table too
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.resolveLoop() }()
	}
	return a, nil
}

// errRateIngress: a node's egress rate is its sender side's to keep.
var errRateIngress = errors.New("nfq: a node's egress rate cannot be kept on arrival: give Rate without Ingress")

// newAgent is an agent with its first table, not yet bound to its queue.
func newAgent(cfg Config) (*Agent, error) {
	a := &Agent{cfg: cfg, epoch: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 0x6e6671)), errc: make(chan error, 1)} // "nfq"
	if cfg.Ingress && cfg.Rate > 0 {
		return nil, errRateIngress
	}
	t, err := newTable(cfg.Links, cfg.Rate, cfg.QueueBytes)
	if err != nil {
		return nil, err
	}
	if len(t.hosts) > 0 && len(cfg.Capture) == 0 {
		return nil, errors.New("nfq: links by host name need a capture prefix (the network their addresses are in)")
	}
	a.bind(t)
	a.tab.Store(t)
	a.queued = prefixes(t, cfg.Capture)
	a.missc = make(chan struct{}, 1)
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// resolveLoop keeps the table's addresses current until Close.
func (a *Agent) resolveLoop() {
	var last time.Time
	for a.ctx.Err() == nil {
		all := a.resolve()
		last = time.Now()
		wait := ResolveEvery
		if !all {
			wait = resolvePending
		}
		t := time.NewTimer(wait)
		select {
		case <-a.ctx.Done():
		case <-t.C:
		case <-a.missc:
			if gap := resolveMissGap - time.Since(last); gap > 0 {
				select {
				case <-a.ctx.Done():
				case <-time.After(gap):
				}
			}
		}
		t.Stop()
	}
}

// resolve looks every Host link of the table in force up and publishes
// the addresses found (a name that does not resolve now keeps its last
// addresses); it reports whether every one resolved.
func (a *Agent) resolve() bool {
	t := a.tab.Load()
	return a.lookup(a.ctx, t, byHost(*t.byAddr.Load()), true)
}

// Resolved lists each Host link's current addresses, by link name.
func (a *Agent) Resolved() map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	for ad, l := range *a.tab.Load().byAddr.Load() {
		out[l.Name] = append(out[l.Name], ad)
	}
	for _, v := range out {
		slices.SortFunc(v, func(x, y netip.Addr) int { return x.Compare(y) })
	}
	return out
}

func (a *Agent) now() int64 { return int64(time.Since(a.epoch)) }

// Err returns a channel that receives the error that stopped the receiver
// (a socket failure), if one does.
func (a *Agent) Err() <-chan error { return a.errc }

// Prefixes are the links' destinations and the capture prefixes: what
// the rules must queue.
func (a *Agent) Prefixes() []netip.Prefix { return slices.Clone(a.queued) }

func prefixes(t *table, capture []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, l := range t.links[:len(t.links)-1] {
		out = append(out, l.Prefix)
	}
	for _, p := range capture {
		if p = p.Masked(); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// classify returns the link of t for the packet's destination, or its
// source with Ingress (the "other" link for none or an unreadable header).
func (a *Agent) classify(t *table, p []byte) *link {
	var dst netip.Addr
	v4, v6 := 16, 24 // daddr offsets; saddr sits just before, of the same size
	if a.cfg.Ingress {
		v4, v6 = 12, 8
	}
	switch {
	case len(p) >= 20 && p[0]>>4 == 4:
		dst = netip.AddrFrom4([4]byte(p[v4 : v4+4]))
	case len(p) >= 40 && p[0]>>4 == 6:
		dst = netip.AddrFrom16([16]byte(p[v6 : v6+16]))
	default:
		return t.links[len(t.links)-1]
	}
	if len(t.hosts) > 0 {
		if l, ok := (*t.byAddr.Load())[dst]; ok {
			return l
		}
	}
	for _, l := range t.links[:len(t.links)-1] {
		if l.Prefix.Contains(dst) {
			return l
		}
	}
	if len(t.hosts) > 0 {
		select { // a node's new address, maybe: look the names up again soon
		case a.missc <- struct{}{}:
		default:
		}
	}
	return t.links[len(t.links)-1]
}

// pace passes a packet of n bytes through a drop-tail queue served at rate
// bits/s whose virtual clock is *next: the departure time, or false for a
// drop.
func pace(now, at int64, next *int64, rate uint64, limit, n int) (int64, bool) {
	if rate == 0 {
		return at, true
	}
	start := max(at, *next)
	backlog := float64(start-now) * float64(rate) / 8e9 // bytes still queued
	if int(backlog)+n > limit {
		return at, false
	}
	*next = start + int64(float64(n)*8e9/float64(rate))
	return *next, true
}

// receive reads queued packets and decides each one's verdict and time. It
// sends at once what is due at once, in one datagram per receive.
func (a *Agent) receive() {
	buf := make([]byte, 1<<20) // a datagram holds many packet messages
	var now []byte
	for !a.stop.Load() {
		now = now[:0]
		err := a.conn.Recv(buf, func(m *Message) error {
			if m.IsAck {
				if m.Errno != 0 {
					a.verdictErrors.Add(1) // e.g. ENOENT: a verdict for a packet the kernel no longer holds
				}
				return nil
			}
			p := m.Packet
			if p == nil {
				return nil
			}
			tab := a.tab.Load()
			l := a.classify(tab, p.Payload)
			l.sent.Add(1)
			l.sentBytes.Add(uint64(p.Len))
			t := a.now()
			at, ok := pace(t, t, &a.nextFree, tab.rate, tab.queueBytes, p.Len)
			if ok {
				at, ok = pace(t, at, &l.nextFree, l.Rate, l.QueueBytes, p.Len)
			}
			if !ok {
				l.queueDrops.Add(1)
				now = AppendVerdict(now, a.cfg.Queue, p.ID, Drop)
				return nil
			}
			if l.Loss > 0 && a.rng.Float64() < l.Loss {
				l.lossDrops.Add(1)
				now = AppendVerdict(now, a.cfg.Queue, p.ID, Drop)
				return nil
			}
			d := l.Delay
			if l.Jitter > 0 {
				d += time.Duration(a.rng.NormFloat64() * float64(l.Jitter))
			}
			at += int64(max(d, 0))
			if at <= t {
				l.fwd.Add(1)
				l.fwdBytes.Add(uint64(p.Len))
				now = AppendVerdict(now, a.cfg.Queue, p.ID, Accept)
				return nil
			}
			a.sched.Push(at, held{id: p.ID, size: int32(p.Len), l: l})
			return nil
		})
		if len(now) > 0 {
			a.send(now)
		}
		switch {
		case err == nil, errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ENOBUFS):
			a.enobufs.Add(1) // the kernel dropped packets it could not hand us
		case errors.Is(err, ErrTruncated):
			a.recvErrors.Add(1)
		default:
			a.recvErrors.Add(1)
			if !a.stop.Load() {
				select {
				case a.errc <- fmt.Errorf("nfq: receive: %w", err):
				default:
				}
			}
			return
		}
	}
}

func (a *Agent) send(b []byte) {
	if err := a.conn.Send(b); err != nil {
		a.sendErrors.Add(1)
	}
}

// verdictChunk is how many verdicts go in one send: a send runs the
// accepted packets' transmission in the kernel before it returns, so the
// chunk bounds how long the last verdict of a due batch waits for the
// first ones' packets.
const verdictChunk = 32

// deliver sends verdicts when they are due and records how late each was.
// It owns its OS thread (precise sleeps, real-time policy), never unlocked.
func (a *Agent) deliver() {
	osched.LockThread()
	if a.cfg.Realtime {
		_ = osched.SetRealtime() // best effort: Sched says which policy is in force
	}
	a.tid.Store(int32(osched.Gettid()))
	defer a.tid.Store(0)
	var (
		due  []linkem.Due[held]
		next int64
		ok   bool
		buf  = make([]byte, 0, verdictChunk*VerdictLen)
	)
	for {
		due, next, ok = a.sched.PopDue(a.now(), due[:0])
		for i := 0; i < len(due); i += verdictChunk {
			chunk := due[i:min(i+verdictChunk, len(due))]
			buf = buf[:0]
			// Lateness at the hand-off, as the switch's: a verdict behind
			// earlier chunks waits for their sends, and that counts.
			t := a.now()
			for _, it := range chunk {
				a.late.Observe(t - it.At)
				buf = AppendVerdict(buf, a.cfg.Queue, it.V.id, Accept)
				it.V.l.fwd.Add(1)
				it.V.l.fwdBytes.Add(uint64(it.V.size))
			}
			a.send(buf)
		}
		clear(due)
		if len(due) > 0 {
			continue
		}
		if a.stop.Load() {
			return
		}
		d := time.Duration(-1)
		if ok {
			d = max(time.Duration(next-a.now()), 0)
		}
		a.wait.Wait(d)
	}
}

// DeliveryThread is the verdict thread's OS thread id (0 until it runs).
func (a *Agent) DeliveryThread() int { return int(a.tid.Load()) }

// Sched is the verdict thread's scheduling policy, as the switch's record
// says it ("SCHED_FIFO 1", "SCHED_OTHER nice 0").
func (a *Agent) Sched() string {
	if tid := a.DeliveryThread(); tid > 0 {
		return osched.ThreadSched(tid)
	}
	return ""
}

// Held is the number of packets whose verdict waits.
func (a *Agent) Held() int { return a.sched.Len() }

// Lateness is how late the agent sent delayed packets' verdicts.
func (a *Agent) Lateness() linkem.Lateness { return a.late.Snapshot() }

// MinDelay is the smallest nonzero configured delay (the lateness bound's
// argument, linkem.LatenessBound).
func (a *Agent) MinDelay() time.Duration {
	var d time.Duration
	for _, l := range a.tab.Load().all() {
		if l.Delay > 0 && (d == 0 || l.Delay < d) {
			d = l.Delay
		}
	}
	return d
}

// Stats are the per-destination counters in the switch's terms, one port
// per link (configured order, then links later tables added, then
// "other"; a link a later table removed keeps its port): Sent what the node sent to
// it, Forwarded what the agent let through, the drops; Received stays 0
// (the agent sees egress only).
func (a *Agent) Stats() []linkem.PortStats {
	names, cs := a.ports.list()
	out := make([]linkem.PortStats, len(cs))
	for i, c := range cs {
		out[i] = linkem.PortStats{
			Port: names[i], SentPackets: c.sent.Load(), SentBytes: c.sentBytes.Load(),
			ForwardedPackets: c.fwd.Load(), ForwardedBytes: c.fwdBytes.Load(),
			DroppedLoss: c.lossDrops.Load(), DroppedQueue: c.queueDrops.Load(),
		}
	}
	out[len(out)-1].ReadErrors = a.recvErrors.Load() + a.enobufs.Load()
	out[len(out)-1].WriteErrors = a.sendErrors.Load() + a.verdictErrors.Load()
	return out
}

// Sample is the agent's lateness record line now (cumulative histogram,
// the max since the last Sample): served for the harness, which merges
// every agent's into the run's linkem/lateness.jsonl.
func (a *Agent) Sample() rundir.LinkemLatenessSample {
	return linkem.SampleOf(time.Now(), a.late.Snapshot(), a.late.TakeIntervalMax(), int64(a.MinDelay()), a.Sched())
}

// Counters is the agent's counters.prom record.
func (a *Agent) Counters() *rundir.LinkemCounters { return linkem.CountersOf(a.Stats(), a.Lateness()) }

// WriteMetrics writes the counters and the lateness histogram in the
// Prometheus text format the switch's counters.prom has, then the kernel
// queue's own counters (families the counters.prom reader skips).
func (a *Agent) WriteMetrics(w io.Writer) error {
	if err := rundir.EncodeLinkemCounters(w, a.Counters()); err != nil {
		return err
	}
	q, err := ReadQueueStats(a.cfg.Queue)
	if err != nil {
		return nil // not in the agent's namespace (a test's in-process agent)
	}
	_, err = fmt.Fprintf(w, "# HELP benchnet_linkem_agent_queue_dropped_packets_total Packets the kernel dropped: its queue full.\n"+
		"# TYPE benchnet_linkem_agent_queue_dropped_packets_total counter\nbenchnet_linkem_agent_queue_dropped_packets_total %d\n"+
		"# HELP benchnet_linkem_agent_user_dropped_packets_total Packets the kernel dropped: the agent's socket buffer full.\n"+
		"# TYPE benchnet_linkem_agent_user_dropped_packets_total counter\nbenchnet_linkem_agent_user_dropped_packets_total %d\n"+
		"# HELP benchnet_linkem_agent_held_packets Packets whose verdict waits.\n"+
		"# TYPE benchnet_linkem_agent_held_packets gauge\nbenchnet_linkem_agent_held_packets %d\n",
		q.QueueDropped, q.UserDropped, a.Held())
	return err
}

// Close stops the threads, accepts every held packet (the node's traffic
// is not cut off by the agent's end) and unbinds the queue. Remove the
// rules first, or packets queued meanwhile are dropped by the kernel (or
// pass, with bypass).
func (a *Agent) Close() error {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	a.stop.Store(true)
	a.cancel()
	a.wait.Wake()
	a.wg.Wait() // the receiver notices within its 100 ms receive timeout
	due, _, _ := a.sched.PopDue(1<<62, nil)
	var buf []byte
	for i, it := range due {
		buf = AppendVerdict(buf, a.cfg.Queue, it.V.id, Accept)
		if (i+1)%verdictChunk == 0 {
			a.send(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		a.send(buf)
	}
	return errors.Join(a.conn.Close(), a.wait.Close())
}

// QueueStats is a queue's line of /proc/net/netfilter/nfnetlink_queue (in
// the reader's network namespace).
type QueueStats struct {
	Queue, PortID, Total        uint32
	QueueDropped, UserDropped   uint32
	IDSequence                  uint32
	CopyMode, CopyRange, Unused uint32
}

// ReadQueueStats reads queue's kernel counters.
func ReadQueueStats(queue uint16) (QueueStats, error) {
	data, err := os.ReadFile("/proc/net/netfilter/nfnetlink_queue")
	if err != nil {
		return QueueStats{}, err
	}
	return parseQueueStats(data, queue)
}

func parseQueueStats(data []byte, queue uint16) (QueueStats, error) {
	for line := range strings.Lines(string(data)) {
		var q QueueStats
		n, _ := fmt.Sscan(line, &q.Queue, &q.PortID, &q.Total, &q.CopyMode, &q.CopyRange, &q.QueueDropped, &q.UserDropped, &q.IDSequence, &q.Unused)
		if n >= 8 && q.Queue == uint32(queue) {
			return q, nil
		}
	}
	return QueueStats{}, fmt.Errorf("nfq: queue %d not bound in this namespace", queue)
}

// Wait blocks until ctx ends or the receiver fails.
func (a *Agent) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-a.errc:
		return err
	}
}
