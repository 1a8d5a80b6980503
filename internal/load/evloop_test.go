package load

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/rundir"
)

func TestMaskBytes(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 1000, 1029} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i * 7)
		}
		key := uint32(0xa1b2c3d4)
		got := bytes.Clone(p)
		maskBytes(key, got)
		kb := binary.LittleEndian.AppendUint32(nil, key)
		for i := range p {
			if got[i] != p[i]^kb[i%4] {
				t.Fatalf("%d bytes: byte %d is %#x, want %#x", n, i, got[i], p[i]^kb[i%4])
			}
		}
	}
}

func TestPending(t *testing.T) {
	var p pending
	jobs := map[uint64]*job{}
	put := func(seq uint64) {
		j := &job{rec: rundir.Sent{Seq: seq}}
		jobs[seq] = j
		p.put(j)
	}
	take := func(seq uint64, want bool) {
		t.Helper()
		j := p.take(seq)
		if (j != nil) != want || j != nil && j != jobs[seq] {
			t.Fatalf("take(%d) = %v, want found %v", seq, j, want)
		}
	}
	for s := uint64(100); s < 3100; s++ {
		put(s)
	}
	take(99, false)
	take(3100, false)
	// Out of order, then in order: the ring compacts as its head advances.
	take(101, true)
	take(101, false)
	take(100, true)
	for s := uint64(102); s < 3000; s++ {
		take(s, true)
	}
	if p.n != 100 || len(p.jobs)-p.head != 100 || len(p.jobs) > 2*1024+100 || p.lo < 1000 {
		t.Fatalf("after 2900 answers: n %d, %d slots from seq %d, head %d: not compacted", p.n, len(p.jobs), p.lo, p.head)
	}
	put(3200) // a gap (txs that failed while nothing was pending)
	put(50)   // below the window: kept aside, never lost
	if p.n != 102 {
		t.Fatalf("n = %d, want 102", p.n)
	}
	take(3150, false)
	take(50, true)
	var left []uint64
	p.each(func(j *job) { left = append(left, j.rec.Seq) })
	if len(left) != 101 || left[0] != 3000 || left[99] != 3099 || left[100] != 3200 || p.n != 0 {
		t.Fatalf("each gave %d jobs (%v ... ), n %d", len(left), left[:3], p.n)
	}
	take(3000, false)
}

// loopPair is a loop connection whose socket's other end the test holds.
func loopPair(t *testing.T) (*evLoop, *loopConn, int) {
	t.Helper()
	l, err := newEvLoop()
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.add(func() string { return "ws://127.0.0.1:1/websocket" })
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fds[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.id)}); err != nil {
		t.Fatal(err)
	}
	c.fd = fds[0]
	t.Cleanup(func() { c.close(); unix.Close(fds[1]); unix.Close(l.epfd); unix.Close(l.outfd) })
	return l, c, fds[1]
}

// serverFrame is an unmasked frame as a server sends it.
func serverFrame(fin bool, op byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	b := []byte{b0}
	switch n := len(p); {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xffff:
		b = append(b, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, p...)
}

func TestLoopFrames(t *testing.T) {
	l, c, peer := loopPair(t)
	out := make(chan rundir.Sent, 16)
	cr := &connRun{out: out}
	for s := uint64(0); s < 3; s++ {
		c.pend.put(&job{c: cr, rec: rundir.Sent{Seq: s}})
	}
	ok := func(id int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`)
	}
	long := []byte(`{"jsonrpc":"2.0","id":3,"result":{"code":7,"data":"","log":"` + strings.Repeat("x", 300) + `","codespace":"","hash":"AB"}}`)
	var stream []byte
	stream = append(stream, serverFrame(true, opText, ok(1))...)
	stream = append(stream, serverFrame(true, opPing, []byte("hi"))...)
	stream = append(stream, serverFrame(false, opText, long[:100])...) // fragmented, 126-length frame in the middle
	stream = append(stream, serverFrame(false, opContinuation, long[100:250])...)
	stream = append(stream, serverFrame(true, opContinuation, long[250:])...)
	stream = append(stream, serverFrame(true, opText, ok(2))...)
	// Byte by byte: every frame arrives cut at every possible place.
	for i := range stream {
		if _, err := unix.Write(peer, stream[i:i+1]); err != nil {
			t.Fatal(err)
		}
		l.wait(time.Millisecond)
	}
	for range 5 {
		l.wait(time.Millisecond)
	}
	got := map[uint64]rundir.Sent{}
	for len(out) > 0 {
		r := <-out
		got[r.Seq] = r
	}
	if len(got) != 3 || got[0].Result != rundir.ResultOK || got[1].Result != rundir.ResultOK || got[2].Result != rundir.ResultRejected || got[2].Code != 7 || got[0].Ack == 0 {
		t.Fatalf("answers %+v: want seqs 0, 1 ok and 2 rejected with code 7", got)
	}
	if c.pend.n != 0 || len(c.rx) != 0 {
		t.Fatalf("%d pending, %d bytes unframed", c.pend.n, len(c.rx))
	}
	buf := make([]byte, 64)
	n, err := unix.Read(peer, buf)
	if err != nil {
		t.Fatal(err)
	}
	ops, ps := unframe(t, buf[:n])
	if len(ops) != 1 || ops[0] != opPong || string(ps[0]) != "hi" {
		t.Fatalf("reply to the ping: ops %v payloads %q, want one pong \"hi\"", ops, ps)
	}

	// A close frame ends the connection; what is pending becomes send_error.
	c.pend.put(&job{c: cr, rec: rundir.Sent{Seq: 3}})
	unix.Write(peer, serverFrame(true, opClose, []byte{0x03, 0xf1}))
	l.wait(10 * time.Millisecond)
	r := <-out
	if c.fd != -1 || r.Seq != 3 || r.Result != rundir.ResultSendError || !strings.Contains(r.Log, "code 1009") {
		t.Fatalf("after a close frame: fd %d, record %+v", c.fd, r)
	}
}

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

// TestLoopNeverBlocks: a node that stops reading fills the socket; sends
// keep returning at once (queued), and once the node reads, every frame
// arrives whole and in order, through a real websocket handshake.
func TestLoopNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	l, c, got := stalledConn(t, release)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1024/16)
	const frames = 12 << 10 // 12 MiB: far beyond the socket buffers, within maxQueued
	start := time.Now()
	for i := range frames {
		binary.BigEndian.PutUint32(payload, uint32(i))
		c.write(appendFrame(nil, opText, payload))
		if c.fd < 0 {
			t.Fatalf("frame %d: connection failed", i)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("12 MiB of writes took %v while the node did not read: the pacer would have waited", d)
	}
	if len(c.out) == 0 {
		t.Fatal("nothing queued: the socket took 12 MiB unread; the test proves nothing")
	}
	if b := c.backpressure(); b != 0 {
		t.Errorf("backpressure %v within maxQueued: the sender never waited", b)
	}
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	for len(c.out) > 0 && time.Now().Before(deadline) {
		l.wait(5 * time.Millisecond)
	}
	if len(c.out) > 0 {
		t.Fatalf("%d bytes still queued after the node read for 20 s", len(c.out))
	}
	l.drain(context.Background())
	msgs := <-got
	if len(msgs) != frames {
		t.Fatalf("node read %d messages, want %d", len(msgs), frames)
	}
	for i, m := range msgs {
		if binary.BigEndian.Uint32(m) != uint32(i) || !bytes.Equal(m[4:], payload[4:]) {
			t.Fatalf("message %d out of order or corrupt", i)
		}
	}
}

// TestLoopBackpressureMeasured: past maxQueued unread bytes the sender
// waits, and the connection counts that wait: the node's backpressure
// (here it reads after 1.5 s), which tells a node that stopped reading
// from a starved generator.
func TestLoopBackpressureMeasured(t *testing.T) {
	release := make(chan struct{})
	l, c, got := stalledConn(t, release)
	stall := 1500 * time.Millisecond
	time.AfterFunc(stall, func() { close(release) })
	const frames = maxQueued/1024 + 4<<10 // 4 MiB past the queue's bound
	frame := appendFrame(nil, opText, bytes.Repeat([]byte("x"), 1024-6))
	for i := range frames {
		c.write(frame)
		if c.fd < 0 {
			t.Fatalf("frame %d: connection failed", i)
		}
	}
	// The sockets' buffers take some of it before the queue fills, so the
	// wait starts a little after the writes do; it ends when the node reads.
	if b := c.backpressure(); b < stall/2 || b > stall+5*time.Second {
		t.Errorf("backpressure %v, want about the node's %v stall", b, stall)
	}
	for deadline := time.Now().Add(20 * time.Second); len(c.out) > 0 && time.Now().Before(deadline); {
		l.wait(5 * time.Millisecond)
	}
	l.drain(context.Background())
	if msgs := <-got; len(msgs) != frames {
		t.Fatalf("node read %d messages, want %d", len(msgs), frames)
	}
}

// stalledConn is a loop connection to a websocket node that reads nothing
// until release closes, then reads every message (sent on got once it has
// read nothing for 5 s).
func stalledConn(t *testing.T, release chan struct{}) (*evLoop, *loopConn, chan [][]byte) {
	t.Helper()
	got := make(chan [][]byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		<-release
		var msgs [][]byte
		for {
			ws.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, m, err := ws.ReadMessage()
			if err != nil {
				break
			}
			msgs = append(msgs, m)
		}
		got <- msgs
	}))
	t.Cleanup(srv.Close)
	l, err := newEvLoop()
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.add(func() string { return wsURL(srv.URL) })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l, c, got
}

// TestLoopAckIsReceiveTime: the loop reads answers only when the pacer
// wakes (here up to 20 ms apart at 10 tx/s), yet each ack is the kernel's
// receive time of the answer, not the read time: it is never later than
// the moment the node's write of the answer returned.
func TestLoopAckIsReceiveTime(t *testing.T) {
	fn := newFakeNode(t, &fakeNode{wrote: map[string]int64{}})
	cfg := Config{RunID: "ack", Rate: 10, Connections: 1, Count: 8, Size: 64, Format: "kv"}
	sink := &memSink{}
	if _, err := Run(context.Background(), cfg, []Target{{Node: "v0", RPCURL: fn.srv.URL}}, sink); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, sink.recs, 8)
	fn.mu.Lock()
	defer fn.mu.Unlock()
	for _, r := range sink.recs {
		wrote, ok := fn.wrote[fmt.Sprint(r.Seq+1)]
		if r.Result != rundir.ResultOK || !ok {
			t.Fatalf("seq %d: %+v, answer written: %v", r.Seq, r, ok)
		}
		if r.Ack < r.SentAt || r.Ack > wrote {
			t.Fatalf("seq %d: ack %v after the send and %v after the node's write returned: the read time, not the receive time",
				r.Seq, time.Duration(r.Ack-r.SentAt), time.Duration(r.Ack-wrote))
		}
	}
}
