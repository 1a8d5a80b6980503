package chainreport

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// latenessCheck is the link emulator's check of its own lateness: from
// results.json, else from linkem/lateness.json; nil when none was made
// (netem, no emulation, or a run from before the check existed).
func (r *run) latenessCheck() *rundir.LinkLateness {
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
			page.F(c.P99Ms, 3), page.F(c.BoundMs, 3), page.F(c.MaxMs, 1))
	}
	return fmt.Sprintf("links on time (emulator p99 lateness %s ms ≤ %s ms)", page.F(c.P99Ms, 3), page.F(c.BoundMs, 3))
}

// lateness is the network section's account of the emulator's lateness
// (emulator names it).
func (r *run) lateness(emulator string) []page.Block {
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
		smallest = page.F(c.SmallestDelayMs, 3)
	}
	sched := ""
	if c.Sched != "" {
		sched = " Its delivery thread ran as " + c.Sched + "."
	}
	return []page.Block{
		page.Para{Text: fmt.Sprintf("How late the %s handed delayed frames to their destination, compared with their scheduled time, over %s. "+
			"The bound is p99 ≤ max(%s ms, %g %% of the smallest configured delay); when it is missed the run's latencies are marked invalid (docs/linkem.md).%s",
			emulator, c.Window, page.F(float64(linkem.LatenessFloor.Microseconds())/1000, 0), linkem.LatenessFraction*100, sched)},

		page.Table{Head: []string{"delayed frames", "mean ms", "p50 ms", "p99 ms", "max ms", "smallest delay ms", "bound (p99) ms", "met"}, Rows: [][]string{{fmt.Sprint(c.Frames), page.F(c.MeanMs, 3), page.F(c.P50Ms, 3), page.F(c.P99Ms, 3), page.F(c.MaxMs, 3), smallest, page.F(c.BoundMs, 3), met}}},

		page.Para{Text: c.Verdict + "."},
	}
}
