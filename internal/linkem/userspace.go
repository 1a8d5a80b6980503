package linkem

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// UserspaceConfig configures the userspace switch.
type UserspaceConfig struct {
	// TapPrefix prefixes TAP names (default "bl" + 4 random hex digits, so
	// concurrent runs do not collide); ports are numbered after it.
	TapPrefix string
	// RecordDir, if set, is where the switch keeps its own record while it
	// runs (the run's linkem/): a line of lateness.jsonl every RecordEvery
	// (default 1 s) and counters.prom rewritten with it, so both are current
	// when a run is analyzed before its testnet goes down.
	RecordDir   string
	RecordEvery time.Duration
	// Realtime runs the delivery thread under SCHED_FIFO (lowest real-time
	// priority) so that CPU contention from the nodes does not make it late;
	// without the privilege (not root) it stays an ordinary thread, which
	// the lateness record says.
	Realtime bool
}

// Userspace is a learning L2 switch in the harness process that owns every
// node's link (a TAP). One goroutine per port reads frames; each frame is
// paced by the SOURCE node's egress rate through a drop-tail queue
// (Endpoint.QueueBytes, counted in Ethernet frame bytes), then per
// destination dropped with the pair's loss probability or delivered after
// the pair's delay plus normal jitter (seeded RNG per port). Delayed frames
// wait in one min-heap serviced by a single delivery goroutine. Broadcast,
// multicast (ARP, IPv6 ND) and unknown unicast frames flood to all other
// ports.
type Userspace struct {
	cfg   UserspaceConfig
	epoch time.Time

	mu     sync.Mutex
	model  *Model
	ports  atomic.Pointer[[]*port]
	closed bool

	snap  atomic.Pointer[Snapshot]
	fdb   sync.Map // MAC [6]byte → *port
	sched Scheduler[frameCopy]
	wait  *Waiter

	late     LatHist      // written by the delivery goroutine only
	minDelay atomic.Int64 // smallest nonzero configured delay, ns
	tid      atomic.Int32 // the delivery goroutine's OS thread
	rec      *recorder

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// frameCopy is one frame copy waiting in the scheduler for its delivery time.
type frameCopy struct {
	src, dst *port
	data     []byte
}

type port struct {
	name string
	tap  string
	idx  atomic.Int32 // node index in the model, -1 = unemulated (harness)
	f    *os.File

	// Owned by the port's reader goroutine.
	rng      *rand.Rand
	nextFree int64 // egress virtual clock, ns since epoch

	rxPackets, rxBytes     atomic.Uint64 // frames the node sent
	fwdPackets, fwdBytes   atomic.Uint64 // copies of them delivered to other ports
	lossDrops, queueDrops  atomic.Uint64
	txPackets, txBytes     atomic.Uint64 // frames delivered to the node
	readErrors, writeError atomic.Uint64
}

// NewUserspace starts an empty switch; add ports with AddPort and bind a
// model with Apply.
func NewUserspace(cfg UserspaceConfig) (*Userspace, error) {
	if cfg.TapPrefix == "" {
		cfg.TapPrefix = "bl" + randHex(2)
	}
	if len(cfg.TapPrefix) > 10 {
		return nil, fmt.Errorf("linkem userspace: tap prefix %q too long (interface names have 15 bytes)", cfg.TapPrefix)
	}
	u := &Userspace{cfg: cfg, epoch: time.Now()}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.ports.Store(&[]*port{})
	w, err := NewWaiter()
	if err != nil {
		return nil, fmt.Errorf("linkem userspace: %w", err)
	}
	u.wait, u.sched.Wake = w, w.Wake
	if cfg.RecordDir != "" {
		if err := u.startRecorder(); err != nil {
			u.cancel()
			_ = w.Close()
			return nil, fmt.Errorf("linkem userspace: %w", err)
		}
	}
	u.wg.Add(1)
	go func() { defer u.wg.Done(); u.deliverLoop() }()
	return u, nil
}

func (*Userspace) Name() string { return KindUserspace }

func (u *Userspace) now() int64 { return int64(time.Since(u.epoch)) }

// AddPort creates a TAP for node name in the caller's (root) namespace and
// starts switching its frames. The runner moves it into the node's namespace
// and configures it there; the switch keeps the fd.
func (u *Userspace) AddPort(name string) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return "", errors.New("linkem userspace: add port: switch closed")
	}
	ports := *u.ports.Load()
	for _, p := range ports {
		if p.name == name {
			return "", fmt.Errorf("linkem userspace: add port %s: already has one (%s)", name, p.tap)
		}
	}
	f, tap, err := openTAP(fmt.Sprintf("%s-%d", u.cfg.TapPrefix, len(ports)))
	if err != nil {
		return "", fmt.Errorf("linkem userspace: add port %s: %w", name, err)
	}
	seed := uint64(len(ports))
	if u.model != nil {
		seed ^= uint64(u.model.Seed)
	}
	p := &port{name: name, tap: tap, f: f, rng: rand.New(rand.NewPCG(seed, 0x6c696e6b656d))} // "linkem"
	p.idx.Store(-1)
	if s := u.snap.Load(); s != nil {
		p.idx.Store(int32(s.Index(name)))
	}
	next := append(ports[:len(ports):len(ports)], p)
	u.ports.Store(&next)
	u.wg.Add(1)
	go func() { defer u.wg.Done(); u.readLoop(p) }()
	return tap, nil
}

// Apply makes the model's current conditions the switch's. Every call must
// pass the same model.
func (u *Userspace) Apply(_ context.Context, m *Model) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.model != nil && u.model != m {
		return errors.New("linkem userspace: apply: a different model than before")
	}
	u.model = m
	s := m.Snapshot()
	u.snap.Store(s)
	u.minDelay.Store(int64(minNonzeroDelay(s)))
	for _, p := range *u.ports.Load() {
		p.idx.Store(int32(s.Index(p.name)))
	}
	return nil
}

// Close stops every goroutine, drops frames still in flight and closes the
// TAP fds (which removes the devices).
func (u *Userspace) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.mu.Unlock()
	u.cancel()
	u.wait.Wake()
	var errs []error
	for _, p := range *u.ports.Load() {
		if err := p.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("linkem userspace: close %s: %w", p.tap, err))
		}
	}
	u.wg.Wait()
	if err := u.stopRecorder(); err != nil {
		errs = append(errs, err)
	}
	if err := u.wait.Close(); err != nil {
		errs = append(errs, fmt.Errorf("linkem userspace: close eventfd: %w", err))
	}
	return errors.Join(errs...)
}

// readLoop switches the frames node p sends.
func (u *Userspace) readLoop(p *port) {
	buf := make([]byte, 65536)
	var dsts []*port
	for {
		n, err := p.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || u.ctx.Err() != nil {
				return
			}
			p.readErrors.Add(1)
			time.Sleep(10 * time.Millisecond) // e.g. EIO while the device is down
			continue
		}
		if n < 14 {
			continue
		}
		p.rxPackets.Add(1)
		p.rxBytes.Add(uint64(n))
		frame := buf[:n]
		var src, dst [6]byte
		copy(dst[:], frame[0:6])
		copy(src[:], frame[6:12])
		if src[0]&1 == 0 {
			if old, ok := u.fdb.Load(src); !ok || old.(*port) != p {
				u.fdb.Store(src, p)
			}
		}
		dsts = dsts[:0]
		if dst[0]&1 == 0 {
			if q, ok := u.fdb.Load(dst); ok && q.(*port) != p {
				dsts = append(dsts, q.(*port))
			}
		}
		if len(dsts) == 0 { // broadcast, multicast, unknown unicast: flood
			for _, q := range *u.ports.Load() {
				if q != p {
					dsts = append(dsts, q)
				}
			}
		}
		u.forward(p, frame, dsts)
	}
}

// forward paces one frame through p's egress queue and hands a copy to
// every destination.
func (u *Userspace) forward(p *port, frame []byte, dsts []*port) {
	now := u.now()
	s := u.snap.Load()
	si := int(p.idx.Load())
	depart := now
	if s != nil && si >= 0 {
		if ep := s.Nodes[si]; ep.Rate > 0 {
			start := max(now, p.nextFree)
			backlog := float64(start-now) * float64(ep.Rate) / 8e9 // bytes still queued
			if int(backlog)+len(frame) > ep.QueueBytes {
				p.queueDrops.Add(1)
				return
			}
			p.nextFree = start + int64(float64(len(frame))*8e9/float64(ep.Rate))
			depart = p.nextFree
		}
	}
	var data []byte
	for _, q := range dsts {
		at := depart
		if di := int(q.idx.Load()); s != nil && si >= 0 && di >= 0 && di != si {
			l := s.Links[si][di]
			if l.Loss > 0 && p.rng.Float64() < l.Loss {
				p.lossDrops.Add(1)
				continue
			}
			d := l.Delay
			if l.Jitter > 0 {
				d += time.Duration(p.rng.NormFloat64() * float64(l.Jitter))
			}
			at += int64(max(d, 0))
		}
		if at <= now { // nothing to wait for: write from the reader
			u.write(p, q, frame)
			continue
		}
		if data == nil {
			data = append([]byte(nil), frame...) // shared read-only by all copies
		}
		u.sched.Push(at, frameCopy{src: p, dst: q, data: data})
	}
}

func (u *Userspace) write(src, dst *port, frame []byte) {
	if _, err := dst.f.Write(frame); err != nil {
		dst.writeError.Add(1) // e.g. EIO: the node's device is down
		return
	}
	src.fwdPackets.Add(1)
	src.fwdBytes.Add(uint64(len(frame)))
	dst.txPackets.Add(1)
	dst.txBytes.Add(uint64(len(frame)))
}

// DeliveryThread is the OS thread id of the goroutine that delivers delayed
// frames (0 until it runs), so tests and benchmarks can pin or starve it.
func (u *Userspace) DeliveryThread() int { return int(u.tid.Load()) }

// deliverLoop writes delayed frames when they are due and records how late
// each one was. It owns its OS thread for the waiter's precise sleeps.
//
// The thread is never unlocked: when the loop returns it exits with the
// goroutine, so its timer slack and scheduling policy never serve other
// goroutines.
func (u *Userspace) deliverLoop() {
	lockThread()
	if u.cfg.Realtime {
		_ = setRealtime() // best effort: the record shows the policy in force
	}
	u.tid.Store(int32(gettid()))
	defer u.tid.Store(0) // the thread dies with the loop; its id may be reused
	var (
		due  []Due[frameCopy]
		next int64
		ok   bool
	)
	for {
		due, next, ok = u.sched.PopDue(u.now(), due[:0])
		for i, it := range due {
			// Lateness at the hand-off: a frame behind others in the same
			// batch waits for their writes too, and that counts.
			u.late.Observe(u.now() - it.At)
			u.write(it.V.src, it.V.dst, it.V.data)
			due[i] = Due[frameCopy]{}
		}
		if len(due) > 0 {
			continue
		}
		if u.ctx.Err() != nil {
			return
		}
		d := time.Duration(-1)
		if ok {
			d = max(time.Duration(next-u.now()), 0)
		}
		u.wait.Wait(d)
	}
}
