package linkem

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// LatenessSample is one line of linkem/lateness.jsonl, which the userspace
// switch appends every UserspaceConfig.RecordEvery while it runs. Counts are
// cumulative since the switch started, so the histogram of any window is the
// difference of two lines; MaxNs is the largest lateness since the previous
// line, so a window's max is the largest of its lines'.
type LatenessSample struct {
	Time   time.Time `json:"t"`
	Frames uint64    `json:"frames"`
	SumNs  int64     `json:"sum_ns"`
	MaxNs  int64     `json:"max_ns"`
	// MinDelayNs is the smallest nonzero configured one-way delay in effect
	// (0: none): the bound scales with it.
	MinDelayNs int64 `json:"min_delay_ns"`
	// Sched is how the delivery thread was scheduled, e.g. "SCHED_FIFO 1".
	Sched string `json:"sched,omitempty"`
	// Counts per bucket of LatUpper, trailing empty buckets left out.
	Counts []uint64 `json:"counts"`
}

// EncodeLatenessSample writes s as one JSON line.
func EncodeLatenessSample(w io.Writer, s LatenessSample) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadLatenessSeries decodes lateness.jsonl. A cut last line (the process
// died mid-write) is dropped; any other bad line is an error naming it.
func ReadLatenessSeries(r io.Reader, name string) ([]LatenessSample, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var out []LatenessSample
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var s LatenessSample
		if err := json.Unmarshal(line, &s); err != nil {
			if i == len(lines)-1 { // no newline after it: cut short
				break
			}
			return out, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if len(s.Counts) > LatBuckets {
			return out, fmt.Errorf("%s:%d: %d buckets, at most %d", name, i+1, len(s.Counts), LatBuckets)
		}
		out = append(out, s)
	}
	return out, nil
}

func (s LatenessSample) hist() Lateness {
	l := Lateness{Frames: s.Frames, Sum: time.Duration(s.SumNs), Max: time.Duration(s.MaxNs), Counts: make([]uint64, LatBuckets)}
	copy(l.Counts, s.Counts)
	return l
}

// recorder keeps the switch's own record in a directory while it runs.
type recorder struct {
	dir    string
	series *os.File
	err    error // first write error, returned by Close
}

func (u *Userspace) startRecorder() error {
	if err := os.MkdirAll(u.cfg.RecordDir, 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	path := filepath.Join(u.cfg.RecordDir, LatenessSeriesFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	u.rec = &recorder{dir: u.cfg.RecordDir, series: f}
	u.record() // a first line: the base of a window that starts now
	every := u.cfg.RecordEvery
	if every <= 0 {
		every = time.Second
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-u.ctx.Done():
				return
			case <-t.C:
				u.record()
			}
		}
	}()
	return nil
}

// record appends a lateness line and rewrites counters.prom.
func (u *Userspace) record() {
	r := u.rec
	l := u.late.snapshot()
	n := len(l.Counts)
	for n > 0 && l.Counts[n-1] == 0 {
		n--
	}
	s := LatenessSample{
		Time: time.Now().UTC(), Frames: l.Frames, SumNs: int64(l.Sum),
		MaxNs: u.late.interval.Swap(0), MinDelayNs: u.minDelay.Load(), Sched: threadSched(u.DeliveryThread()), Counts: l.Counts[:n],
	}
	w := bufio.NewWriter(r.series)
	err := errors.Join(EncodeLatenessSample(w, s), w.Flush(), u.WriteMetricsFile(filepath.Join(r.dir, CountersFile)))
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("linkem record %s: %w", r.dir, err)
	}
}

// stopRecorder writes the last line once the delivery loop has stopped.
func (u *Userspace) stopRecorder() error {
	if u.rec == nil {
		return nil
	}
	u.record()
	return errors.Join(u.rec.err, u.rec.series.Close())
}
