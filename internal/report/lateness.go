package report

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/benchnet/benchnet/internal/linkem"
)

// latenessCheck is the link emulator's check of its own lateness: from
// results.json, else from linkem/lateness.json; nil when none was made
// (netem, no emulation, or a run from before the check existed).
func (r *run) latenessCheck() *linkem.LatenessCheck {
	if r.results != nil && r.results.Linkem != nil {
		return r.results.Linkem
	}
	c, err := r.dir.ReadLinkLateness()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.note(err)
		}
		return nil
	}
	return c
}

// latencyHeadline says in the headline whether the latencies measured the
// configured network; "" when the emulator did not check itself.
func (r *run) latencyHeadline() string {
	c := r.latenessCheck()
	if c == nil || c.Frames == 0 {
		return ""
	}
	if !c.Met {
		return fmt.Sprintf("latency: **INVALID**: the link emulator was late (p99 %s ms > bound %s ms, max %s ms), so latencies include its own delay",
			fmtF(c.P99Ms, 3), fmtF(c.BoundMs, 3), fmtF(c.MaxMs, 1))
	}
	return fmt.Sprintf("links on time (emulator p99 lateness %s ms ≤ %s ms)", fmtF(c.P99Ms, 3), fmtF(c.BoundMs, 3))
}

// lateness is the network section's account of the emulator's lateness.
func (r *run) lateness() []block {
	c := r.latenessCheck()
	if c == nil {
		return nil
	}
	met := "yes"
	if !c.Met {
		met = "**NO**"
	}
	smallest := "—"
	if c.SmallestDelayMs > 0 {
		smallest = fmtF(c.SmallestDelayMs, 3)
	}
	sched := ""
	if c.Sched != "" {
		sched = " Its delivery thread ran as " + c.Sched + "."
	}
	return []block{
		para{Text: fmt.Sprintf("How late the userspace switch handed delayed frames to their destination, compared with their scheduled time, over %s. "+
			"The bound is p99 ≤ max(%s ms, %g %% of the smallest configured delay); when it is missed the run's latencies are marked invalid (docs/linkem.md).%s",
			c.Window, fmtF(float64(linkem.LatenessFloor.Microseconds())/1000, 0), linkem.LatenessFraction*100, sched)},

		table{Head: []string{"delayed frames", "mean ms", "p50 ms", "p99 ms", "max ms", "smallest delay ms", "bound (p99) ms", "met"}, Rows: [][]string{{fmt.Sprint(c.Frames), fmtF(c.MeanMs, 3), fmtF(c.P50Ms, 3), fmtF(c.P99Ms, 3), fmtF(c.MaxMs, 3), smallest, fmtF(c.BoundMs, 3), met}}},

		para{Text: c.Verdict + "."},
	}
}
