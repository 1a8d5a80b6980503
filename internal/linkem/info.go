package linkem

// DirName is the run directory's folder for the link emulation.
const DirName = "linkem"

// Files a run directory keeps under linkem/: what the link emulation was.
const (
	InfoFile     = "linkem.json"   // Info
	MatrixFile   = "matrix.csv"    // the zone matrix, CometBFT's CSV format
	CountersFile = "counters.prom" // userspace switch counters and lateness histogram (rewritten while it runs)
	// LatenessSeriesFile is the userspace switch's own lateness record
	// (LatenessSample lines), written by the switch while it runs.
	LatenessSeriesFile = "lateness.jsonl"
	// LatenessFile is the check of the measured window against the bound
	// (LatenessCheck), written by the analysis from the series.
	LatenessFile = "lateness.json"
)

// Info is linkem/linkem.json.
type Info struct {
	Backend   string `json:"backend"`
	Reason    string `json:"reason"`
	Zones     string `json:"zones,omitempty"`
	Jitter    string `json:"jitter,omitempty"`
	Loss      string `json:"loss,omitempty"`
	Bandwidth string `json:"bandwidth,omitempty"`
}
