package load

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// unframe reads client frames back (RFC 6455: masked, final) and returns
// their opcodes and unmasked payloads.
func unframe(t *testing.T, b []byte) (ops []byte, payloads [][]byte) {
	t.Helper()
	for len(b) > 0 {
		if b[0]&0x80 == 0 || b[1]&0x80 == 0 {
			t.Fatalf("frame not final or not masked: % x", b[:2])
		}
		op, n, h := b[0]&0x0f, int(b[1]&0x7f), 2
		switch n {
		case 126:
			n, h = int(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			n, h = int(binary.BigEndian.Uint64(b[2:])), 10
		}
		key := b[h : h+4]
		p := bytes.Clone(b[h+4 : h+4+n])
		for i := range p {
			p[i] ^= key[i&3]
		}
		ops, payloads = append(ops, op), append(payloads, p)
		b = b[h+4+n:]
	}
	return ops, payloads
}

func TestAppendFrame(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 1500, 65535, 65536, 70000} {
		p := bytes.Repeat([]byte{'x', 'y', 'z'}, n/3+1)[:n]
		ops, got := unframe(t, appendFrame([]byte{}, opText, p))
		if len(ops) != 1 || ops[0] != opText || !bytes.Equal(got[0], p) {
			t.Errorf("%d bytes: frame does not read back", n)
		}
	}
}

// TestFrameWriterNeverBlocks: a peer that stops reading fills the socket;
// writes keep returning at once (queued), and once the peer reads, every
// frame arrives whole and in order.
func TestFrameWriterNeverBlocks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-accepted
	defer peer.Close()
	fw, err := newFrameWriter(c)
	if err != nil {
		t.Fatal(err)
	}
	defer fw.retire()

	// 12 MiB is far beyond the socket buffers and within maxQueued.
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1024/16)
	const frames = 12 << 10
	// A writer that waits for the peer would never finish here: the peer
	// reads only after the last write returned.
	wrote := make(chan error, 1)
	go func() {
		for i := range frames {
			p := bytes.Clone(payload)
			binary.BigEndian.PutUint32(p, uint32(i))
			if err := fw.write(appendFrame(nil, opText, p)); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("writes blocked while the peer did not read: the pacer would have waited")
	}
	fw.mu.Lock()
	queued := len(fw.q)
	fw.mu.Unlock()
	if queued == 0 {
		t.Fatal("nothing queued: the peer's socket took 12 MiB without reading; the test proves nothing")
	}

	frameLen := len(appendFrame(nil, opText, payload))
	got := make([]byte, frames*frameLen)
	peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatalf("read back: %v", err)
	}
	_, ps := unframe(t, got)
	for i, p := range ps {
		if binary.BigEndian.Uint32(p) != uint32(i) || !bytes.Equal(p[4:], payload[4:]) {
			t.Fatalf("frame %d out of order or corrupt", i)
		}
	}
}

// TestFrameWriterDeadlineCleared: the flusher's write deadline must not
// outlive its write, or the pacer's next direct write fails with a timeout
// long after the socket drained (seen on the quickstart: a session lost 10 s
// after the node's last pause).
func TestFrameWriterDeadlineCleared(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-accepted
	defer peer.Close()
	go io.Copy(io.Discard, peer) // a peer that reads, but only after the queue formed
	fw, err := newFrameWriter(c)
	if err != nil {
		t.Fatal(err)
	}
	defer fw.retire()
	fw.timeout = 50 * time.Millisecond
	big := appendFrame(nil, opText, make([]byte, 8<<20)) // more than the socket takes at once
	if err := fw.write(big); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fw.mu.Lock()
		idle := len(fw.q) == 0 && !fw.flushing
		fw.mu.Unlock()
		if idle || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(3 * fw.timeout) // past the flusher's deadline
	if err := fw.write(appendFrame(nil, opText, []byte("after"))); err != nil {
		t.Fatalf("direct write after the flusher's deadline: %v", err)
	}
}

// TestFrameWriterError: a write after the peer is gone returns an error
// (sticky), never hangs.
func TestFrameWriterError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fw, err := newFrameWriter(c)
	if err != nil {
		t.Fatal(err)
	}
	defer fw.retire()
	deadline := time.Now().Add(5 * time.Second)
	var werr error
	for werr == nil && time.Now().Before(deadline) {
		werr = fw.write(appendFrame(nil, opText, make([]byte, 4096)))
		time.Sleep(time.Millisecond)
	}
	if werr == nil {
		t.Fatal("no error writing to a closed peer")
	}
	if err := fw.write([]byte{0}); err == nil {
		t.Error("error not sticky")
	}
}
