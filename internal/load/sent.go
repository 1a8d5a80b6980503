package load

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// SentFile is the file name of the per-tx send log in a run directory.
const SentFile = "sent.csv"

// Results of a send attempt (sent.csv's result column).
const (
	ResultOK        = "ok"         // transport accepted it (sync: CheckTx code 0)
	ResultRejected  = "rejected"   // the node answered no: CheckTx code != 0, or a JSON-RPC error
	ResultSendError = "send_error" // transport/connection failure; Log has the error
)

// Sent is one row of sent.csv: one tx the generator attempted. Times are
// unix nanoseconds.
type Sent struct {
	Seq      uint64
	Conn     int
	Node     string
	Hash     string // uppercase hex SHA-256 of the tx bytes (CometBFT's tx hash)
	Intended int64  // scheduled send time, t0 + offset(i)
	SentAt   int64  // when the write started
	Ack      int64  // when the RPC answered; 0 for none
	Result   string
	// Code is the CheckTx code (sync), or the JSON-RPC error code (negative)
	// when the node answered with an error instead of a result.
	Code int64
	Log  string
}

var sentHeader = []string{"seq", "conn", "node", "hash", "intended_ns", "sent_ns", "ack_ns", "result", "code", "log"}

// Sink receives every Sent record of a run, from one goroutine.
type Sink interface {
	Sent(Sent) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Sent) error

func (f SinkFunc) Sent(s Sent) error { return f(s) }

// SentWriter appends records to sent.csv and flushes at least every second,
// so an interrupted run leaves a readable file. Safe for concurrent use.
type SentWriter struct {
	mu   sync.Mutex
	f    *os.File
	w    *csv.Writer
	err  error
	stop chan struct{}
	done chan struct{}
}

// NewSentWriter creates (or truncates) path and writes the header.
func NewSentWriter(path string) (*SentWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create sent log: %w", err)
	}
	w := &SentWriter{f: f, w: csv.NewWriter(bufio.NewWriterSize(f, 1<<16)), stop: make(chan struct{}), done: make(chan struct{})}
	if err := w.w.Write(sentHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("write sent log header: %w", err)
	}
	go w.flushLoop()
	return w, nil
}

func (w *SentWriter) flushLoop() {
	defer close(w.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.mu.Lock()
			w.flushLocked()
			w.mu.Unlock()
		case <-w.stop:
			return
		}
	}
}

// flushLocked pushes the CSV writer's and the bufio buffer's bytes to the file.
func (w *SentWriter) flushLocked() {
	if w.err != nil {
		return
	}
	w.w.Flush()
	if err := w.w.Error(); err != nil {
		w.err = fmt.Errorf("write sent log: %w", err)
	}
}

// Sent appends one record.
func (w *SentWriter) Sent(s Sent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.w.Write([]string{
		strconv.FormatUint(s.Seq, 10), strconv.Itoa(s.Conn), s.Node, s.Hash,
		strconv.FormatInt(s.Intended, 10), strconv.FormatInt(s.SentAt, 10), strconv.FormatInt(s.Ack, 10),
		s.Result, strconv.FormatInt(s.Code, 10), s.Log,
	}); err != nil {
		w.err = fmt.Errorf("write sent log: %w", err)
	}
	return w.err
}

// Close flushes and closes the file.
func (w *SentWriter) Close() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("close sent log: %w", err)
	}
	return w.err
}

// ReadSent reads a sent.csv, in file order (completion order, not seq order).
func ReadSent(path string) ([]Sent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read sent log: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = len(sentHeader)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read sent log %s: header: %w", path, err)
	}
	for i, h := range sentHeader {
		if head[i] != h {
			return nil, fmt.Errorf("read sent log %s: column %d is %q, want %q", path, i+1, head[i], h)
		}
	}
	var out []Sent
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read sent log %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		s, err := parseSent(rec)
		if err != nil {
			return out, fmt.Errorf("read sent log %s:%d: %w", path, line, err)
		}
		out = append(out, s)
	}
}

func parseSent(rec []string) (Sent, error) {
	var s Sent
	var err error
	num := func(col int, f func(string) error) {
		if err == nil {
			if e := f(rec[col]); e != nil {
				err = fmt.Errorf("%s: %w", sentHeader[col], e)
			}
		}
	}
	num(0, func(v string) (e error) { s.Seq, e = strconv.ParseUint(v, 10, 64); return })
	num(1, func(v string) (e error) { s.Conn, e = strconv.Atoi(v); return })
	num(4, func(v string) (e error) { s.Intended, e = strconv.ParseInt(v, 10, 64); return })
	num(5, func(v string) (e error) { s.SentAt, e = strconv.ParseInt(v, 10, 64); return })
	num(6, func(v string) (e error) { s.Ack, e = strconv.ParseInt(v, 10, 64); return })
	num(8, func(v string) (e error) { s.Code, e = strconv.ParseInt(v, 10, 64); return })
	s.Node, s.Hash, s.Result, s.Log = rec[2], rec[3], rec[7], rec[9]
	return s, err
}
