package load

import (
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Sink receives every Sent record of a run, from one goroutine.
type Sink interface {
	Sent(rundir.Sent) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(rundir.Sent) error

func (f SinkFunc) Sent(s rundir.Sent) error { return f(s) }

// SentWriter appends records to sent.csv and flushes at least every second,
// so an interrupted run leaves a readable file. Safe for concurrent use.
type SentWriter struct {
	w *rundir.Writer[rundir.Sent]
}

// NewSentWriter creates (or truncates) path and writes the header.
func NewSentWriter(path string) (*SentWriter, error) {
	w, err := rundir.SentCSV.Create(path)
	if err != nil {
		return nil, err
	}
	w.StartFlushing(time.Second)
	return &SentWriter{w: w}, nil
}

// Sent appends one record.
func (w *SentWriter) Sent(s rundir.Sent) error { return w.w.Write(&s) }

// Close flushes and closes the file.
func (w *SentWriter) Close() error { return w.w.Close() }
