package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LinkemDir is the run directory's folder for the link emulation; the
// files below live in it (written by linkem, the check by analyze).
const LinkemDir = "linkem"

// Files under LinkemDir.
const (
	LinkemInfoFile     = "linkem.json"   // LinkemInfo: backend and conditions
	LinkemMatrixFile   = "matrix.csv"    // the zone matrix, CometBFT's CSV format
	LinkemCountersFile = "counters.prom" // userspace switch counters and lateness histogram (rewritten while it runs)
	// LinkemLatenessSeriesFile is the userspace switch's own lateness
	// record (linkem.LatenessSample lines), written while it runs.
	LinkemLatenessSeriesFile = "lateness.jsonl"
	// LinkemLatenessFile is the check of the measured window against the
	// bound (LinkLateness), written by the analysis from the series.
	LinkemLatenessFile = "lateness.json"
)

// LinkemInfo is linkem/linkem.json: which backend emulated the links and
// why, and the conditions it was given. A run without one had no emulated
// links.
type LinkemInfo struct {
	Backend   string `json:"backend"`
	Reason    string `json:"reason"`
	Zones     string `json:"zones,omitempty"`
	Jitter    string `json:"jitter,omitempty"`
	Loss      string `json:"loss,omitempty"`
	Bandwidth string `json:"bandwidth,omitempty"`
}

// WriteLinkemInfo writes linkem/linkem.json, making the folder.
func (d *Dir) WriteLinkemInfo(i *LinkemInfo) error {
	if err := os.MkdirAll(d.Join(LinkemDir), 0o755); err != nil {
		return err
	}
	return d.WriteJSON(filepath.Join(LinkemDir, LinkemInfoFile), i)
}

// ReadLinkemInfo reads linkem/linkem.json; fs.ErrNotExist when the run had
// no emulated links.
func (d *Dir) ReadLinkemInfo() (*LinkemInfo, error) {
	var i LinkemInfo
	if err := d.ReadJSON(filepath.Join(LinkemDir, LinkemInfoFile), &i); err != nil {
		return nil, err
	}
	return &i, nil
}

// LinkLateness is linkem/lateness.json: the userspace switch's lateness
// over a run's measured window, against LatenessBound. When Met is false the
// emulated delays were longer than configured by more than the bound, and
// the run's latency results do not measure the configured network.
type LinkLateness struct {
	// Window is the part of the run the check covers, widened to the
	// switch's record lines around it (one per second).
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Window string    `json:"window"` // what bounds it, e.g. "load_start to drained"
	Frames uint64    `json:"delayed_frames"`
	MeanMs float64   `json:"mean_ms"`
	P50Ms  float64   `json:"p50_ms"`
	P99Ms  float64   `json:"p99_ms"`
	MaxMs  float64   `json:"max_ms"`
	// SmallestDelayMs is the smallest nonzero configured one-way delay in
	// the window (0: none), BoundMs the p99 allowed for it.
	SmallestDelayMs float64 `json:"smallest_delay_ms"`
	BoundMs         float64 `json:"bound_p99_ms"`
	Met             bool    `json:"met"`
	// Sched is how the delivery thread was scheduled in the window (every
	// policy seen, in order, e.g. "SCHED_FIFO 1").
	Sched string `json:"delivery_sched,omitempty"`
	// Verdict says the same in one sentence with the figures.
	Verdict string `json:"verdict"`
}

// ReadLinkLateness reads linkem/lateness.json.
func (d *Dir) ReadLinkLateness() (*LinkLateness, error) {
	var c LinkLateness
	if err := d.ReadJSON(filepath.Join(LinkemDir, LinkemLatenessFile), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// WriteLinkLateness writes linkem/lateness.json.
func (d *Dir) WriteLinkLateness(c *LinkLateness) error {
	return d.WriteJSON(filepath.Join(LinkemDir, LinkemLatenessFile), c)
}

// LinkemLatenessBuckets is the number of buckets of the switch's lateness
// histogram (linkem.LatBuckets, which is held equal to it): a lateness line
// has at most this many counts.
const LinkemLatenessBuckets = 98

// LinkemLatenessSample is one line of linkem/lateness.jsonl, which the
// userspace switch appends every second or so while it runs. Counts are
// cumulative since the switch started, so the histogram of any window is the
// difference of two lines; MaxNs is the largest lateness since the previous
// line, so a window's max is the largest of its lines'.
type LinkemLatenessSample struct {
	Time   time.Time `json:"t"`
	Frames uint64    `json:"frames"`
	SumNs  int64     `json:"sum_ns"`
	MaxNs  int64     `json:"max_ns"`
	// MinDelayNs is the smallest nonzero configured one-way delay in effect
	// (0: none): the bound scales with it.
	MinDelayNs int64 `json:"min_delay_ns"`
	// Sched is how the delivery thread was scheduled, e.g. "SCHED_FIFO 1".
	Sched string `json:"sched,omitempty"`
	// Counts per bucket of linkem.LatUpper, trailing empty buckets left out.
	Counts []uint64 `json:"counts"`
}

// LinkemLatenessSeries is the codec of linkem/lateness.jsonl (a cut last
// line, from a harness that died mid-write, is tolerated).
var LinkemLatenessSeries = &JSONL[LinkemLatenessSample]{
	Name: filepath.Join(LinkemDir, LinkemLatenessSeriesFile),
	check: func(s *LinkemLatenessSample) error {
		if len(s.Counts) > LinkemLatenessBuckets {
			return fmt.Errorf("%d buckets, at most %d", len(s.Counts), LinkemLatenessBuckets)
		}
		return nil
	},
}
