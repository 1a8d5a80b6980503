package analyze

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/rundir"
)

// CheckLinks certifies the emulated links as loadStats certifies the load:
// when the userspace switch left a lateness record, the window from the
// start of the load to the drained mempools is checked against the
// emulator's bound, linkem/lateness.json is written, and a miss marks the
// latency results invalid (throughput and accounting stand: a late link
// delays txs, it does not lose them). Without a record (netem, no
// emulation) the fields stay absent.
func CheckLinks(dir string, res *rundir.Results) error {
	d, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	series, _, err := rundir.LinkemLatenessSeries.ReadFile(rundir.LinkemLatenessSeries.Path(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	events, _ := d.ReadEvents() // a cut last line still leaves the ones before
	from, to, window := measuredWindow(events)
	c := linkem.CheckLateness(series, from, to, window)
	applyLinkCheck(res, &c)
	return d.WriteLinkLateness(&c)
}

func applyLinkCheck(res *rundir.Results, c *rundir.LinkLateness) {
	ok := c.Met
	res.Linkem, res.LatencyValid, res.LatencyInvalid = c, &ok, ""
	if !ok {
		res.LatencyInvalid = c.Verdict
	}
}

// measuredWindow is what the run's latencies depend on: from the start of
// the load until the mempools drained (or the load ended, for a run that
// did not drain); zero times when the events do not say.
func measuredWindow(events []rundir.Event) (from, to time.Time, window string) {
	window = "whole record"
	for _, e := range events {
		switch {
		case e.Kind == rundir.EventLoadStart && from.IsZero():
			from, window = e.Time, "load_start to end of record"
		case e.Kind == rundir.EventLoadDone && !from.IsZero() && to.IsZero():
			to, window = e.Time, "load_start to load_done"
		case e.Kind == rundir.EventDrained && !from.IsZero():
			to, window = e.Time, "load_start to drained"
		}
	}
	return from, to, window
}

// LatencyRow is the summary's "latency valid" row, only when checked.
func LatencyRow(r *rundir.Results) (value, note string, ok bool) {
	if r.LatencyValid == nil || r.Linkem == nil {
		return "", "", false
	}
	c := r.Linkem
	note = fmt.Sprintf("link emulator lateness p99 %.3f ms, bound %.3f ms", c.P99Ms, c.BoundMs)
	if !*r.LatencyValid {
		return "NO", note, true
	}
	return "yes", note, true
}
