package linkem

import "github.com/benchnet/benchnet/internal/rundir"

// DirName and the file names under it are the run directory's (rundir owns
// them); these names are kept for the package's callers.
const (
	DirName            = rundir.LinkemDir
	InfoFile           = rundir.LinkemInfoFile
	MatrixFile         = rundir.LinkemMatrixFile
	CountersFile       = rundir.LinkemCountersFile
	LatenessSeriesFile = rundir.LinkemLatenessSeriesFile
	LatenessFile       = rundir.LinkemLatenessFile
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
