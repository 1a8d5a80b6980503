package rundir

import "time"

// LinkemDir is the run directory's folder for the link emulation; the
// files below live in it (written by linkem, the check by analyze).
const LinkemDir = "linkem"

// Files under LinkemDir.
const (
	LinkemInfoFile     = "linkem.json"   // linkem.Info: backend and conditions
	LinkemMatrixFile   = "matrix.csv"    // the zone matrix, CometBFT's CSV format
	LinkemCountersFile = "counters.prom" // userspace switch counters and lateness histogram (rewritten while it runs)
	// LinkemLatenessSeriesFile is the userspace switch's own lateness
	// record (linkem.LatenessSample lines), written while it runs.
	LinkemLatenessSeriesFile = "lateness.jsonl"
	// LinkemLatenessFile is the check of the measured window against the
	// bound (LinkLateness), written by the analysis from the series.
	LinkemLatenessFile = "lateness.json"
)

// FaultsFile is faults.json: each perturbation's effect and each rotate
// cycle (analyze.FaultEffects), written by the analysis.
const FaultsFile = "faults.json"

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
