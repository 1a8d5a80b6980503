package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// frameWriter writes websocket client frames to a TCP connection so that
// the pacer never waits for the node. A frame goes straight to the socket
// with one non-blocking write when nothing is queued; what the socket does
// not take (the node stopped reading: its receive window is full) is
// queued, in order, and a flusher goroutine writes the queue as the socket
// drains, in few large writes. Waiting for a node that does not read is
// the node's saturation, measured as its latency; blocking the pacer on it
// made the open loop closed (lags of 40-175 ms at 2x700 tx/s while the
// node answered 400 ms late), and the generator was blamed for it.
//
// Frames are written through syscall.RawConn, beside gorilla/websocket,
// which keeps the handshake, the reading and the closing frame; every
// frame the connection sends while a frameWriter is in use (pongs
// included) goes through it, so frames never interleave.
type frameWriter struct {
	raw      syscall.RawConn
	conn     net.Conn
	maxQueue int
	timeout  time.Duration // of one flusher write

	mu       sync.Mutex
	q, spare []byte
	flushing bool  // the flusher owns the socket (q was non-empty)
	err      error // first write error; sticky
	space    *sync.Cond
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

// maxQueued bounds the bytes a connection queues for a node that does not
// read (about 8 s of 2x700 tx/s of 1 KiB txs); past it the pacer waits, and
// its lag shows it.
const maxQueued = 16 << 20

// errNoRawConn: the connection is not a plain TCP socket (e.g. TLS).
var errNoRawConn = errors.New("not a raw socket")

func newFrameWriter(c net.Conn) (*frameWriter, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errNoRawConn
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	w := &frameWriter{raw: raw, conn: c, maxQueue: maxQueued, timeout: 10 * time.Second, wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	w.space = sync.NewCond(&w.mu)
	go w.flusher()
	return w, nil
}

// Websocket opcodes (RFC 6455 section 5.2).
const (
	opText  = 0x1
	opClose = 0x8
	opPong  = 0xA
)

// appendFrame appends one final, masked client frame (RFC 6455 5.2-5.3).
func appendFrame(b []byte, op byte, payload []byte) []byte {
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	k := rand.Uint32()
	key := [4]byte{byte(k), byte(k >> 8), byte(k >> 16), byte(k >> 24)}
	b = append(b, key[:]...)
	start := len(b)
	b = append(b, payload...)
	for i := range b[start:] {
		b[start+i] ^= key[i&3]
	}
	return b
}

// write sends frame (whole frames only), or queues what the socket does
// not take at once. It waits only when maxQueue bytes are already queued.
// The error is the connection's first write error, now or earlier.
func (w *frameWriter) write(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if len(w.q) == 0 && !w.flushing {
		n, err := w.tryWrite(frame)
		if err != nil {
			w.fail(err)
			return w.err
		}
		frame = frame[n:]
		if len(frame) == 0 {
			return nil
		}
	}
	for len(w.q) > 0 && len(w.q)+len(frame) > w.maxQueue && w.err == nil {
		w.space.Wait()
	}
	if w.err != nil {
		return w.err
	}
	w.q = append(w.q, frame...)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// tryWrite is one non-blocking write(2): the bytes taken, and an error
// other than EAGAIN.
func (w *frameWriter) tryWrite(b []byte) (int, error) {
	var n int
	var werr error
	err := w.raw.Write(func(fd uintptr) bool {
		for len(b) > n {
			k, err := unix.Write(int(fd), b[n:])
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return true // do not wait: the rest is queued
			}
			if err != nil {
				werr = err
				return true
			}
			n += k
		}
		return true
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return n, fmt.Errorf("write: %w", err)
	}
	return n, nil
}

// fail records the first error and closes the connection, so the reader
// fails what is pending; callers hold mu.
func (w *frameWriter) fail(err error) {
	if w.err == nil {
		w.err = err
		w.conn.Close()
	}
	w.space.Broadcast()
}

// flusher writes the queue while there is one, waiting for the socket to
// drain (within a write deadline of 10 s per write, as before).
func (w *frameWriter) flusher() {
	defer close(w.done)
	for {
		select {
		case <-w.wake:
		case <-w.quit:
			return
		}
		for {
			w.mu.Lock()
			if len(w.q) == 0 || w.err != nil {
				w.flushing = false
				w.mu.Unlock()
				break
			}
			buf := w.q
			w.q, w.spare = w.spare[:0], nil
			w.flushing = true
			w.space.Broadcast()
			w.mu.Unlock()

			w.conn.SetWriteDeadline(time.Now().Add(w.timeout))
			_, err := w.conn.Write(buf) // blocks in the netpoller, not on the pacer
			// The deadline stays on the socket and also fails the pacer's
			// non-blocking writes once it passes: clear it before the
			// pacer may write again (it does only when flushing is false).
			w.conn.SetWriteDeadline(time.Time{})
			w.mu.Lock()
			w.spare = buf[:0]
			if err != nil {
				w.fail(fmt.Errorf("write: %w", err))
			}
			w.mu.Unlock()
		}
	}
}

// errRetired is the error of a write after retire.
var errRetired = errors.New("connection closing")

// retire ends the flusher and fails every later write, so that gorilla can
// write the closing frame alone; what is still queued is dropped (the
// connection is being closed). Idempotent.
func (w *frameWriter) retire() {
	w.mu.Lock()
	if w.err == nil {
		w.err = errRetired
	}
	w.space.Broadcast()
	w.mu.Unlock()
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	<-w.done
}
