package rundir

import "github.com/benchnet/benchnet/internal/judge"

// A soak's run directory (benchnet soak) is an ordinary run directory with
// soak.json beside results.json [SoakResult, SoakRecord], and soak.md,
// soak.html and plots/soak.png.
const (
	SoakFile   = "soak.json"
	SoakSchema = 1
)

// SoakRecord is soak.json's codec.
var SoakRecord = Record[SoakResult]{Name: SoakFile, Schema: SoakSchema}

// SoakResult is soak.json: the throughput series and its decay fit.
type SoakResult struct {
	SchemaVersion int `json:"schema_version"`
	// Series is committed tx/s per second from block times: t is the start
	// of each 1 s bin, from the first block with run txs.
	T   []float64   `json:"t_sec"`
	TPS []float64   `json:"tps"`
	Fit judge.Decay `json:"fit"`
}
