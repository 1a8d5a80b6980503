package load

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/benchnet/benchnet/internal/rundir"
)

// methodName maps a manifest method to the JSON-RPC method.
func methodName(m string) (string, error) {
	switch m {
	case "async", "broadcast_tx_async":
		return "broadcast_tx_async", nil
	case "sync", "broadcast_tx_sync":
		return "broadcast_tx_sync", nil
	}
	return "", fmt.Errorf("method %q: want async or sync", m)
}

// appendRequest writes a JSON-RPC request for tx. The id is seq+1: CometBFT
// treats ids as int|string and some clients drop a zero id.
func appendRequest(b []byte, seq uint64, method string, tx []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendUint(b, seq+1, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{"tx":"`...)
	b = base64.StdEncoding.AppendEncode(b, tx)
	return append(b, `"}}`...)
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Code uint32 `json:"code"`
		Log  string `json:"log"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"`
	} `json:"error"`
}

// seq recovers the tx sequence from the response id.
func (r *rpcResponse) seq() (uint64, bool) {
	s := strings.Trim(string(r.ID), `"`)
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, false
	}
	return id - 1, true
}

// accepted is the result of the common answer fastAccepted recognises.
var accepted = struct {
	Code uint32 `json:"code"`
	Log  string `json:"log"`
}{}

// fastAccepted recognises, without reflection, the answer nearly every tx
// gets: CometBFT's `{"jsonrpc":"2.0","id":N,"result":{"code":0,...` with an
// empty log, and returns N-1. Anything else (an error, a non-zero code, a
// log, a string id) goes through json.Unmarshal, so the two paths agree.
func fastAccepted(msg []byte) (uint64, bool) {
	const head, tail = `{"jsonrpc":"2.0","id":`, `,"result":{"code":0,`
	if !bytes.HasPrefix(msg, []byte(head)) {
		return 0, false
	}
	rest := msg[len(head):]
	n := 0
	var id uint64
	for n < len(rest) && n < 19 && rest[n] >= '0' && rest[n] <= '9' {
		id = id*10 + uint64(rest[n]-'0')
		n++
	}
	if n == 0 || id == 0 || (n > 1 && rest[0] == '0') || !bytes.HasPrefix(rest[n:], []byte(tail)) {
		return 0, false
	}
	body := rest[n+len(tail):]
	if bytes.Count(body, []byte(`"log":""`)) != 1 || bytes.Contains(body, []byte(`"error"`)) || bytes.Contains(body, []byte(`"code"`)) {
		return 0, false
	}
	return id - 1, true
}

// parseAnswer reads one websocket message: the tx sequence it answers and
// the answer; ok is false for a message that answers no tx of ours (an
// event, a foreign id), which ids make safe to skip.
func parseAnswer(msg []byte) (seq uint64, r rpcResponse, ok bool) {
	if seq, ok = fastAccepted(msg); ok {
		r.Result = &accepted
		return seq, r, true
	}
	if json.Unmarshal(msg, &r) != nil {
		return 0, r, false
	}
	seq, ok = r.seq()
	return seq, r, ok
}

// outcome classifies an answer: a result with code 0 is ok, a non-zero
// CheckTx code or a JSON-RPC error (mempool full, tx already in cache) is a
// rejection by the node.
func (r *rpcResponse) outcome() (result string, code int64, log string) {
	switch {
	case r.Error != nil:
		msg := r.Error.Message
		if r.Error.Data != "" {
			msg += ": " + r.Error.Data
		}
		return rundir.ResultRejected, r.Error.Code, msg
	case r.Result == nil:
		return rundir.ResultSendError, 0, "response has neither result nor error"
	case r.Result.Code != 0:
		return rundir.ResultRejected, int64(r.Result.Code), r.Result.Log
	}
	return rundir.ResultOK, 0, r.Result.Log
}

// transport sends the txs of one connection. send is called by the
// connection's pacer goroutine only; it must not wait for the response.
type transport interface {
	send(ctx context.Context, job *job)
	// drain waits for outstanding responses until ctx ends, then fails the
	// rest and releases the connection.
	drain(ctx context.Context)
}

// job is one tx attempt; the transport builds the tx at send time (so the
// time inside it is the send time) and finishes the record exactly once.
type job struct {
	rec rundir.Sent
	c   *connRun
}

// backoff spaces out reconnection attempts: while a connection is down,
// due txs are recorded as send_error at once instead of stalling the pacer.
type backoff struct {
	mu    sync.Mutex
	until time.Time
	delay time.Duration
	err   error
}

func (b *backoff) down(now time.Time) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return now.Before(b.until), b.err
}

func (b *backoff) fail(now time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delay = min(max(2*b.delay, 50*time.Millisecond), 2*time.Second)
	b.until, b.err = now.Add(b.delay), err
}

func (b *backoff) ok() {
	b.mu.Lock()
	b.delay, b.err = 0, nil
	b.mu.Unlock()
}

// --- websocket ---------------------------------------------------------------

// wsTransport pipelines requests over one websocket with gorilla's blocking
// writes: the pacer goroutine writes, a reader goroutine per session matches
// responses by id. Plain ws:// connections on the real clock go through the
// event loop instead (evloop.go); this serves wss:// (TLS) and fake clocks.
type wsTransport struct {
	rpc func() string // the node's RPC URL, read at every dial
	bo  backoff
	// Used by the sending goroutine only.
	buf, tx     []byte
	deadlineSet time.Time
	deadlineFor *wsSession

	mu      sync.Mutex
	sess    *wsSession     // nil: not connected
	readers sync.WaitGroup // every session's reader, old ones included
}

type wsSession struct {
	conn    *websocket.Conn
	mu      sync.Mutex
	pending map[uint64]*job
	reason  string // why the session was closed by us, for pending txs
	done    chan struct{}
}

// wsURL turns http://host:26657 into ws://host:26657/websocket.
func wsURL(rpc string) string {
	u := strings.TrimSuffix(rpc, "/")
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	if !strings.HasSuffix(u, "/websocket") {
		u += "/websocket"
	}
	return u
}

func newWS(rpc func() string) *wsTransport { return &wsTransport{rpc: rpc} }

var wsDialer = websocket.Dialer{HandshakeTimeout: 5 * time.Second, WriteBufferSize: 1 << 16, ReadBufferSize: 1 << 16}

// connect opens a session; errors are recorded in the backoff.
func (w *wsTransport) connect(ctx context.Context) *wsSession {
	u := wsURL(w.rpc())
	conn, _, err := wsDialer.DialContext(ctx, u, nil)
	if err != nil {
		w.bo.fail(time.Now(), fmt.Errorf("dial %s: %w", u, err))
		return nil
	}
	w.bo.ok()
	s := &wsSession{conn: conn, pending: map[uint64]*job{}, done: make(chan struct{})}
	w.readers.Add(1)
	go w.read(s)
	return s
}

func (w *wsTransport) read(s *wsSession) {
	defer w.readers.Done()
	defer close(s.done)
	var err error
	var body bytes.Buffer // reused: one response is read at a time
	for {
		var mr io.Reader
		if _, mr, err = s.conn.NextReader(); err != nil {
			break
		}
		body.Reset()
		if _, err = body.ReadFrom(mr); err != nil {
			break
		}
		ack := time.Now().UnixNano()
		seq, r, ok := parseAnswer(body.Bytes())
		if !ok {
			continue
		}
		s.mu.Lock()
		j := s.pending[seq]
		delete(s.pending, seq)
		s.mu.Unlock()
		if j == nil {
			continue
		}
		j.rec.Ack = ack
		j.rec.Result, j.rec.Code, j.rec.Log = r.outcome()
		j.c.finish(j)
	}
	s.conn.Close()
	w.mu.Lock()
	if w.sess == s {
		w.sess = nil
		w.bo.fail(time.Now(), fmt.Errorf("connection lost: %w", err))
	}
	w.mu.Unlock()
	s.mu.Lock()
	reason := s.reason
	if reason == "" {
		reason = fmt.Sprintf("connection lost before response: %v", err)
	}
	for seq, j := range s.pending {
		delete(s.pending, seq)
		j.rec.Result, j.rec.Log = rundir.ResultSendError, reason
		j.c.finish(j)
	}
	s.mu.Unlock()
}

func (w *wsTransport) send(ctx context.Context, j *job) {
	now := time.Now()
	w.mu.Lock()
	s := w.sess
	w.mu.Unlock()
	if s == nil {
		if down, err := w.bo.down(now); down {
			j.c.build(j, now, nil)
			j.rec.Result, j.rec.Log = rundir.ResultSendError, fmt.Sprintf("not connected: %v", err)
			j.c.finish(j)
			return
		}
		if s = w.connect(ctx); s == nil {
			_, err := w.bo.down(now)
			j.c.build(j, time.Now(), nil)
			j.rec.Result, j.rec.Log = rundir.ResultSendError, err.Error()
			j.c.finish(j)
			return
		}
		w.mu.Lock()
		w.sess = s
		w.mu.Unlock()
	}
	now = time.Now()
	w.tx = j.c.build(j, now, w.tx)
	w.buf = appendRequest(w.buf[:0], j.rec.Seq, j.c.method, w.tx)
	s.mu.Lock()
	s.pending[j.rec.Seq] = j
	s.mu.Unlock()
	// The deadline guards against a node that stops reading; moving it
	// once a second instead of per tx spares a timer update per send.
	if now.Sub(w.deadlineSet) > time.Second || s != w.deadlineFor {
		s.conn.SetWriteDeadline(now.Add(10 * time.Second))
		w.deadlineSet, w.deadlineFor = now, s
	}
	if err := s.conn.WriteMessage(websocket.TextMessage, w.buf); err != nil {
		s.mu.Lock()
		_, mine := s.pending[j.rec.Seq]
		delete(s.pending, j.rec.Seq)
		s.mu.Unlock()
		if mine {
			j.rec.Result, j.rec.Log = rundir.ResultSendError, fmt.Sprintf("write: %v", err)
			j.c.finish(j)
		}
		w.mu.Lock()
		if w.sess == s {
			w.sess = nil
			w.bo.fail(time.Now(), fmt.Errorf("write: %w", err))
		}
		w.mu.Unlock()
		s.conn.Close() // the reader fails what is still pending
	}
}

func (w *wsTransport) drain(ctx context.Context) {
	// Readers of sessions dropped earlier may still be failing their txs.
	defer w.readers.Wait()
	w.mu.Lock()
	s := w.sess
	w.sess = nil
	w.mu.Unlock()
	if s == nil {
		return
	}
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.reason = fmt.Sprintf("no response before the end of the drain: %v", context.Cause(ctx))
			s.mu.Unlock()
			s.conn.Close()
			<-s.done
			return
		case <-s.done:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	s.conn.Close()
	<-s.done
}

// --- HTTP -------------------------------------------------------------------

// httpTransport POSTs each tx from a pool of InFlight workers: a slow answer
// occupies one worker, not the schedule. When all are busy the pacer waits,
// and that tx's lag shows it.
type httpTransport struct {
	rpc    func() string // the node's RPC URL, read at every request
	client *http.Client
	bo     backoff
	jobs   chan *job
	wg     sync.WaitGroup
	// abort cancels in-flight requests when the drain ends.
	reqCtx context.Context
	abort  context.CancelFunc
}

func newHTTP(rpc func() string, inFlight int) *httpTransport {
	tr := &http.Transport{MaxIdleConnsPerHost: inFlight, MaxConnsPerHost: inFlight, IdleConnTimeout: 30 * time.Second}
	h := &httpTransport{rpc: rpc, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, jobs: make(chan *job)}
	h.reqCtx, h.abort = context.WithCancel(context.Background())
	for range inFlight {
		h.wg.Add(1)
		go h.worker()
	}
	return h
}

func (h *httpTransport) worker() {
	defer h.wg.Done()
	var buf, tx []byte
	for j := range h.jobs {
		now := time.Now()
		if down, err := h.bo.down(now); down {
			j.c.build(j, now, nil)
			j.rec.Result, j.rec.Log = rundir.ResultSendError, fmt.Sprintf("not connected: %v", err)
			j.c.finish(j)
			continue
		}
		tx = j.c.build(j, now, tx)
		buf = appendRequest(buf[:0], j.rec.Seq, j.c.method, tx)
		j.rec.Result, j.rec.Code, j.rec.Log = h.post(buf, &j.rec)
		j.c.finish(j)
	}
}

func (h *httpTransport) post(body []byte, rec *rundir.Sent) (string, int64, string) {
	req, err := http.NewRequestWithContext(h.reqCtx, http.MethodPost, h.rpc(), bytes.NewReader(body))
	if err != nil {
		return rundir.ResultSendError, 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		if h.reqCtx.Err() != nil {
			return rundir.ResultSendError, 0, "no response before the end of the drain"
		}
		h.bo.fail(time.Now(), err)
		return rundir.ResultSendError, 0, err.Error()
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec.Ack = time.Now().UnixNano()
	if err != nil {
		h.bo.fail(time.Now(), err)
		return rundir.ResultSendError, 0, fmt.Sprintf("read response: %v", err)
	}
	h.bo.ok()
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return rundir.ResultSendError, 0, fmt.Sprintf("HTTP %d: undecodable response: %.200q", resp.StatusCode, data)
	}
	return r.outcome()
}

func (h *httpTransport) send(ctx context.Context, j *job) {
	select {
	case h.jobs <- j:
	case <-ctx.Done():
		j.c.build(j, time.Now(), nil)
		j.rec.Result, j.rec.Log = rundir.ResultSendError, fmt.Sprintf("not sent: %v", ctx.Err())
		j.c.finish(j)
	}
}

func (h *httpTransport) drain(ctx context.Context) {
	close(h.jobs)
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		h.abort()
		<-done
	}
	h.abort()
	h.client.CloseIdleConnections()
}

// Broadcast sends one tx with a one-shot HTTP JSON-RPC request, for warm-up
// txs outside the measured load. method is "async"/"sync" or the full name.
// A JSON-RPC error answer is returned as err; a CheckTx rejection as code.
func Broadcast(ctx context.Context, url, method string, tx []byte) (code uint32, log string, err error) {
	m, err := methodName(method)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(appendRequest(nil, 0, m, tx)))
	if err != nil {
		return 0, "", fmt.Errorf("broadcast: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("broadcast to %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("broadcast to %s: read response: %w", url, err)
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, "", fmt.Errorf("broadcast to %s: HTTP %d: undecodable response %.200q", url, resp.StatusCode, data)
	}
	switch {
	case r.Error != nil:
		return 0, "", fmt.Errorf("broadcast to %s: rpc error %d: %s %s", url, r.Error.Code, r.Error.Message, r.Error.Data)
	case r.Result == nil:
		return 0, "", fmt.Errorf("broadcast to %s: response has no result", url)
	}
	return r.Result.Code, r.Result.Log, nil
}
