package linkem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// The record's bucket count is rundir's; a different histogram layout would
// not compile (a negative constant does not convert to uint).
const (
	_ = uint(LatBuckets - rundir.LinkemLatenessBuckets)
	_ = uint(rundir.LinkemLatenessBuckets - LatBuckets)
)

func sampleHist(s *rundir.LinkemLatenessSample) Lateness {
	l := Lateness{Frames: s.Frames, Sum: time.Duration(s.SumNs), Max: time.Duration(s.MaxNs), Counts: make([]uint64, LatBuckets)}
	copy(l.Counts, s.Counts)
	return l
}

// recorder keeps the switch's own record in a directory while it runs.
type recorder struct {
	dir    string
	series *rundir.JSONLWriter[rundir.LinkemLatenessSample]
	err    error // first write error, returned by Close
}

func (u *Userspace) startRecorder() error {
	if err := os.MkdirAll(u.cfg.RecordDir, 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	f, err := rundir.LinkemLatenessSeries.Append(filepath.Join(u.cfg.RecordDir, rundir.LinkemLatenessSeriesFile))
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
	s := SampleOf(time.Now(), u.late.Snapshot(), u.late.TakeIntervalMax(), u.minDelay.Load(), threadSched(u.DeliveryThread()))
	err := errors.Join(r.series.Write(&s), u.WriteMetricsFile(filepath.Join(r.dir, rundir.LinkemCountersFile)))
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
