package linkem

// Files a run directory keeps under linkem/: what the link emulation was.
const (
	InfoFile     = "linkem.json"   // Info
	MatrixFile   = "matrix.csv"    // the zone matrix, CometBFT's CSV format
	CountersFile = "counters.prom" // userspace switch counters at the end
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
