package load

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/rundir"
)

// evLoop is the websocket transport of a run as one event loop on the
// pacing thread. The pacer wakes once per tick; then, before it sends, it
// reads whatever the connections received while it slept (answers, pings)
// and accounts it. An answer's ack time is not when it was read but when
// the kernel received it (SO_TIMESTAMPNS), so reading once per tick costs
// the ack no precision: answers that share one read share the receive
// time of the read's last segment, as they shared a read before. The loop
// replaces a reader goroutine and a flusher per connection: at 2x700 tx/s
// each answer used to wake the Go scheduler (netpoller, an idle thread, a
// goroutine hand-off), a quarter of the harness's CPU in a perf profile.
//
// Sockets are raw file descriptors outside Go's netpoller (dialled by Go,
// then duplicated and the Go side closed), written with non-blocking
// write(2): what a socket does not take is queued in order and written
// when epoll says it drained, so the pacer never waits for a node that
// stops reading until maxQueued bytes are queued for it (then its lag shows
// it). Everything here runs on one goroutine: no locks.
//
// Only the pacing goroutine may call SleepUntil, send and drain; connect
// may run in parallel for different connections before the first tick.
type evLoop struct {
	// epfd has every connected socket for reading, level-triggered, and
	// is only polled (timeout 0); outfd has the sockets with queued bytes
	// for writing, and the pacer sleeps in it.
	epfd, outfd int
	conns       []*loopConn // by epoll data
	events      []unix.EpollEvent
	// noPwait2: the kernel has no epoll_pwait2 (before 5.11); waits then
	// round down to whole milliseconds and sleep the rest in nanosleep,
	// reading answers at most that much late.
	noPwait2 bool
}

func newEvLoop() (*evLoop, error) {
	in, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	out, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(in)
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &evLoop{epfd: in, outfd: out, events: make([]unix.EpollEvent, 64)}, nil
}

// add makes a connection to the websocket whose URL src gives
// (ws://host:port/path), read again at every dial: a restarted swarm task
// is published on new ports. It dials on its first send (or connect).
func (l *evLoop) add(src func() string) (*loopConn, error) {
	if _, err := parseWS(src()); err != nil {
		return nil, err
	}
	c := &loopConn{l: l, id: len(l.conns), src: src, fd: -1}
	l.conns = append(l.conns, c)
	return c, nil
}

// wsAddr is what a dial needs of a ws:// URL.
type wsAddr struct{ url, host, hostHeader, path string }

func parseWS(rawURL string) (wsAddr, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return wsAddr{}, fmt.Errorf("websocket url %q: %w", rawURL, err)
	}
	if u.Scheme != "ws" {
		return wsAddr{}, fmt.Errorf("websocket url %q: the event loop speaks ws:// only", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	return wsAddr{url: rawURL, host: host, hostHeader: u.Host, path: u.RequestURI()}, nil
}

// Now is the wall clock: the loop is the pacer's Clock.
func (l *evLoop) Now() time.Time { return time.Now() }

// SleepUntil serves the connections until t (never returning earlier), or
// until ctx ends.
func (l *evLoop) SleepUntil(ctx context.Context, t time.Time) error {
	return napUntil(ctx, t, l.wait)
}

// wait sleeps up to d, or until a socket with queued bytes can take
// more, then flushes those and reads what every socket received.
func (l *evLoop) wait(d time.Duration) {
	if n, err := l.pwait(d); err == nil {
		for _, ev := range l.events[:n] {
			if c := l.conns[ev.Fd]; c.fd >= 0 {
				c.flush() // writable, or an error that write reports
			}
		}
	}
	l.poll()
}

// poll reads every socket that has something to read (without waiting).
func (l *evLoop) poll() {
	n, err := unix.EpollWait(l.epfd, l.events, 0)
	if err != nil {
		return
	}
	for _, ev := range l.events[:n] {
		if c := l.conns[ev.Fd]; c.fd >= 0 {
			c.readable()
		}
	}
}

// pwait is epoll_pwait2 on the write set with a nanosecond timeout (the
// thread's timer slack applies, 1 ns on the pacing thread).
func (l *evLoop) pwait(d time.Duration) (int, error) {
	if !l.noPwait2 {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.outfd), uintptr(unsafe.Pointer(&l.events[0])),
			uintptr(len(l.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e == 0 {
			return int(r), nil
		}
		if e != unix.ENOSYS {
			return 0, e
		}
		l.noPwait2 = true
	}
	n, err := unix.EpollWait(l.outfd, l.events, int(d/time.Millisecond))
	if err != nil || n > 0 || d < time.Millisecond {
		if n == 0 && err == nil {
			ts := unix.NsecToTimespec(d.Nanoseconds())
			_ = unix.Nanosleep(&ts, nil)
		}
		return n, err
	}
	rest := unix.NsecToTimespec((d % time.Millisecond).Nanoseconds())
	_ = unix.Nanosleep(&rest, nil)
	return 0, nil
}

// pendingCount is how many txs of every connection await an answer.
func (l *evLoop) pendingCount() int {
	n := 0
	for _, c := range l.conns {
		n += c.pend.n
	}
	return n
}

// drain serves the connections until every sent tx was answered or ctx
// ends; unanswered txs are then send_error rows. Every connection is
// closed after it, and the loop with them.
func (l *evLoop) drain(ctx context.Context) {
	for l.pendingCount() > 0 {
		if ctx.Err() != nil {
			reason := fmt.Sprintf("no response before the end of the drain: %v", context.Cause(ctx))
			for _, c := range l.conns {
				c.fail(reason)
			}
			break
		}
		l.wait(5 * time.Millisecond)
	}
	for _, c := range l.conns {
		c.close()
	}
	unix.Close(l.epfd)
	unix.Close(l.outfd)
}

// loopConn is one websocket of the loop.
type loopConn struct {
	l           *evLoop
	id          int
	src         func() string // the websocket URL, read at every dial
	bo          backoff
	fd          int    // -1: not connected
	watchingOut bool   // EPOLLOUT registered
	out         []byte // bytes the socket did not take yet, in order
	rx          []byte // received bytes not yet framed
	frag        []byte // a fragmented message being assembled
	fragging    bool
	pend        pending
	// blocked is how long write waited with maxQueued bytes queued: the
	// node did not read. A lag it explains is the node's backpressure, not
	// a starved generator (whose queue is empty).
	blocked        time.Duration
	buf, tx, frame []byte   // the sender's scratch
	oob            [64]byte // control messages of a read
}

// maxMessage bounds one answer: CometBFT's are a few hundred bytes.
const maxMessage = 16 << 20

var wsGUID = []byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11")

// connect dials and upgrades the connection, then takes its socket out of
// Go's netpoller into the loop. The error is recorded in the backoff too.
func (c *loopConn) connect(ctx context.Context) error {
	err := c.dial(ctx)
	if err != nil {
		c.bo.fail(time.Now(), err)
		return err
	}
	c.bo.ok()
	return nil
}

func (c *loopConn) dial(ctx context.Context) error {
	a, err := parseWS(c.src())
	if err != nil {
		return err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", a.host)
	if err != nil {
		return fmt.Errorf("dial %s: %w", a.url, err)
	}
	defer conn.Close() // the loop keeps a duplicate of the socket
	var key [16]byte
	_, _ = rand.Read(key[:])
	k := base64.StdEncoding.EncodeToString(key[:])
	req := "GET " + a.path + " HTTP/1.1\r\nHost: " + a.hostHeader + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + k + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		return fmt.Errorf("dial %s: handshake: %w", a.url, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return fmt.Errorf("dial %s: handshake: %w", a.url, err)
	}
	h := sha1.Sum(append([]byte(k), wsGUID...))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(h[:]) {
		return fmt.Errorf("dial %s: handshake: %s, not a websocket upgrade", a.url, resp.Status)
	}
	leftover, _ := br.Peek(br.Buffered())
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return fmt.Errorf("dial %s: not a socket", a.url)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("dial %s: %w", a.url, err)
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return fmt.Errorf("dial %s: dup: %w", a.url, errors.Join(err, derr))
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return fmt.Errorf("dial %s: %w", a.url, err)
	}
	// The kernel's receive time of each read: the ack. Without it (an old
	// kernel) the ack is the read time.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	if err := unix.EpollCtl(c.l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.id)}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("dial %s: epoll: %w", a.url, err)
	}
	c.fd, c.watchingOut = fd, false
	c.out, c.rx, c.frag, c.fragging = c.out[:0], append(c.rx[:0], leftover...), c.frag[:0], false
	return nil
}

// send writes j's request now (or queues it); it never waits for the
// answer. A failure makes the connection's pending txs send_error rows.
func (c *loopConn) send(ctx context.Context, j *job) {
	now := time.Now()
	if c.fd < 0 {
		if down, err := c.bo.down(now); down {
			j.c.build(j, now, nil)
			j.rec.Result, j.rec.Log = rundir.ResultSendError, fmt.Sprintf("not connected: %v", err)
			j.c.finish(j)
			return
		}
		if err := c.connect(ctx); err != nil {
			j.c.build(j, time.Now(), nil)
			j.rec.Result, j.rec.Log = rundir.ResultSendError, err.Error()
			j.c.finish(j)
			return
		}
		now = time.Now()
	}
	c.tx = j.c.build(j, now, c.tx)
	c.buf = appendRequest(c.buf[:0], j.rec.Seq, j.c.method, c.tx)
	c.frame = appendFrame(c.frame[:0], opText, c.buf)
	c.pend.put(j)
	c.write(c.frame)
}

// write sends b (whole frames) or queues what the socket does not take.
// It waits, serving the loop, only while maxQueued bytes are queued.
func (c *loopConn) write(b []byte) {
	if len(c.out) == 0 {
		n, err := writeSome(c.fd, b)
		if err != nil {
			c.fail(fmt.Sprintf("write: %v", err))
			return
		}
		if b = b[n:]; len(b) == 0 {
			return
		}
	}
	if len(c.out)+len(b) > maxQueued {
		// The node has not read maxQueued bytes: wait (the pacer's lag
		// shows it), up to the write timeout gorilla used to apply.
		start := time.Now()
		deadline := start.Add(10 * time.Second)
		timedOut := false
		for c.fd >= 0 && len(c.out) > 0 && len(c.out)+len(b) > maxQueued {
			if timedOut = time.Now().After(deadline); timedOut {
				break
			}
			c.l.wait(5 * time.Millisecond)
		}
		c.blocked += time.Since(start)
		if timedOut {
			c.fail("write: the node read nothing for 10 s")
			return
		}
		if c.fd < 0 {
			return
		}
		if len(c.out) == 0 {
			c.write(b)
			return
		}
	}
	c.out = append(c.out, b...)
	c.watchOut(true)
}

// backpressure is the time the sender waited on this connection's full
// queue (read after the run, on the pacing thread's side of wg.Wait).
func (c *loopConn) backpressure() time.Duration { return c.blocked }

// maxQueued bounds the bytes a connection queues for a node that does not
// read (about 8 s of 2x700 tx/s of 1 KiB txs); past it the pacer waits, and
// its lag shows it.
const maxQueued = 16 << 20

// writeSome is one non-blocking write(2) (EINTR retried): the bytes
// taken; EAGAIN is not an error.
func writeSome(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := unix.Write(fd, b[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return n, nil
		case err != nil:
			return n, err
		}
		n += k
	}
	return n, nil
}

// flush writes the queue as the socket takes it.
func (c *loopConn) flush() {
	n, err := writeSome(c.fd, c.out)
	if err != nil {
		c.fail(fmt.Sprintf("write: %v", err))
		return
	}
	c.out = c.out[:copy(c.out, c.out[n:])]
	if len(c.out) == 0 {
		c.watchOut(false)
	}
}

func (c *loopConn) watchOut(on bool) {
	if c.watchingOut == on || c.fd < 0 {
		return
	}
	op := unix.EPOLL_CTL_DEL
	if on {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(c.l.outfd, op, c.fd, &unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(c.id)}); err != nil {
		c.fail(fmt.Sprintf("epoll: %v", err))
		return
	}
	c.watchingOut = on
}

// readable reads what the socket holds and handles every whole frame; the
// ack is the kernel's receive time of the read.
func (c *loopConn) readable() {
	if cap(c.rx)-len(c.rx) < 16<<10 {
		c.rx = slices.Grow(c.rx, 64<<10)
	}
	n, oobn, _, _, err := unix.Recvmsg(c.fd, c.rx[len(c.rx):cap(c.rx)], c.oob[:], 0)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		c.fail(fmt.Sprintf("connection lost before response: read: %v", err))
		return
	case n == 0:
		c.fail("connection lost before response: closed by the node")
		return
	}
	c.rx = c.rx[:len(c.rx)+n]
	ack, ok := rxTime(c.oob[:oobn])
	if !ok {
		ack = time.Now().UnixNano()
	}
	rest, reason := c.frames(c.rx, ack)
	if reason != "" {
		c.fail(reason)
		return
	}
	c.rx = c.rx[:copy(c.rx, rest)]
}

// rxTime finds SCM_TIMESTAMPNS in a read's control messages.
func rxTime(oob []byte) (int64, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0, false
		}
		data := oob[unix.CmsgLen(0):h.Len]
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
			return ts.Nano(), true
		}
		oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob)):]
	}
	return 0, false
}

// frames handles the whole frames at the start of b (RFC 6455 5.2; a
// server's frames are not masked) and returns the bytes of an incomplete
// last frame, or why the connection must end.
func (c *loopConn) frames(b []byte, ack int64) (rest []byte, fail string) {
	for len(b) >= 2 {
		fin, op := b[0]&0x80 != 0, b[0]&0x0f
		n, h := uint64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return b, ""
			}
			n, h = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				return b, ""
			}
			n, h = binary.BigEndian.Uint64(b[2:]), 10
		}
		masked := b[1]&0x80 != 0
		if masked {
			h += 4
		}
		if n > maxMessage {
			return nil, fmt.Sprintf("connection lost before response: a %d-byte frame", n)
		}
		if uint64(len(b)) < uint64(h)+n {
			return b, ""
		}
		p := b[h : uint64(h)+n]
		if masked {
			maskBytes(binary.LittleEndian.Uint32(b[h-4:]), p)
		}
		b = b[uint64(h)+n:]
		switch op {
		case opText, opBinary:
			if fin {
				c.message(p, ack)
			} else {
				c.frag, c.fragging = append(c.frag[:0], p...), true
			}
		case opContinuation:
			if !c.fragging || len(c.frag)+len(p) > maxMessage {
				return nil, "connection lost before response: bad continuation frame"
			}
			if c.frag = append(c.frag, p...); fin {
				c.message(c.frag, ack)
				c.frag, c.fragging = c.frag[:0], false
			}
		case opPing:
			c.write(appendFrame(nil, opPong, p))
		case opClose:
			code := ""
			if len(p) >= 2 {
				code = fmt.Sprintf(" (code %d)", binary.BigEndian.Uint16(p))
				c.write(appendFrame(nil, opClose, p[:2]))
			}
			return nil, "connection lost before response: closed by the node" + code
		}
		if c.fd < 0 {
			return nil, ""
		}
	}
	return b, ""
}

// message accounts one answer.
func (c *loopConn) message(msg []byte, ack int64) {
	seq, r, ok := parseAnswer(msg)
	if !ok {
		return
	}
	j := c.pend.take(seq)
	if j == nil {
		return
	}
	j.rec.Ack = ack
	j.rec.Result, j.rec.Code, j.rec.Log = r.outcome()
	j.c.finish(j)
}

// fail closes the connection: its pending txs become send_error rows with
// reason, and sends back off before redialling.
func (c *loopConn) fail(reason string) {
	if c.fd < 0 {
		return
	}
	unix.Close(c.fd) // the only descriptor of the socket: epoll forgets it
	c.fd = -1
	c.out, c.rx, c.frag, c.fragging = c.out[:0], c.rx[:0], c.frag[:0], false
	c.bo.fail(time.Now(), errors.New(reason))
	c.pend.each(func(j *job) {
		j.rec.Result, j.rec.Log = rundir.ResultSendError, reason
		j.c.finish(j)
	})
}

// drain is the loop's (evLoop.drain serves every connection at once, on
// the pacing thread).
func (c *loopConn) drain(context.Context) {}

// close ends a drained connection with a closing frame (best effort).
func (c *loopConn) close() {
	if c.fd < 0 {
		return
	}
	if len(c.out) == 0 {
		_, _ = writeSome(c.fd, appendFrame(nil, opClose, []byte{0x03, 0xe8})) // 1000: normal closure
	}
	unix.Close(c.fd)
	c.fd = -1
}

// pending is a connection's unanswered txs in send order, found by seq in
// O(1): a connection's sequence numbers increase by one per send.
type pending struct {
	jobs []*job // jobs[i] has seq lo+i; nil once answered
	head int    // jobs[:head] are all answered
	lo   uint64
	n    int
	// other holds a job whose seq is not above the last one put (never
	// seen: a connection sends in order), so that nothing is lost if it
	// happens.
	other map[uint64]*job
}

func (p *pending) put(j *job) {
	seq := j.rec.Seq
	if len(p.jobs) == p.head {
		p.jobs, p.head, p.lo = p.jobs[:0], 0, seq
	}
	next := p.lo + uint64(len(p.jobs))
	if seq < next {
		if p.other == nil {
			p.other = map[uint64]*job{}
		}
		p.other[seq] = j
		p.n++
		return
	}
	for ; next < seq; next++ {
		p.jobs = append(p.jobs, nil)
	}
	p.jobs = append(p.jobs, j)
	p.n++
}

func (p *pending) take(seq uint64) *job {
	if j, ok := p.other[seq]; ok {
		delete(p.other, seq)
		p.n--
		return j
	}
	if seq < p.lo || seq-p.lo >= uint64(len(p.jobs)) {
		return nil
	}
	i := int(seq - p.lo)
	j := p.jobs[i]
	if j == nil {
		return nil
	}
	p.jobs[i] = nil
	p.n--
	for p.head < len(p.jobs) && p.jobs[p.head] == nil {
		p.head++
	}
	if p.head >= 1024 && p.head >= len(p.jobs)/2 {
		k := copy(p.jobs, p.jobs[p.head:])
		clear(p.jobs[k:])
		p.jobs, p.lo, p.head = p.jobs[:k], p.lo+uint64(p.head), 0
	}
	return j
}

// each removes every pending job, in send order, handing it to f.
func (p *pending) each(f func(*job)) {
	jobs, other := p.jobs[p.head:], p.other
	p.jobs, p.head, p.n, p.other = p.jobs[:0], 0, 0, nil
	for i, j := range jobs {
		if j != nil {
			jobs[i] = nil
			f(j)
		}
	}
	for _, j := range other {
		f(j)
	}
}
