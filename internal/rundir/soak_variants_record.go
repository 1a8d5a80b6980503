package rundir

// A soak over variants DIR/<timestamp>-<name>-soak-variants/ (benchnet soak
// on a manifest with [variants]):
//
//	soak-variants.json  the record [SoakVariantsIndex, SoakVariantsRecord]
//	manifest.toml       the manifest whose variants ran
//	runs/<run>/         one soak run directory per variant (soak.json in each)
//	soak-variants.md, soak-variants.html, plots/   the report
const (
	SoakVariantsFile   = "soak-variants.json"
	SoakVariantsRuns   = "runs"
	SoakVariantsSchema = 1
)

// SoakVariantsRecord is soak-variants.json's codec.
var SoakVariantsRecord = Record[SoakVariantsIndex]{Name: SoakVariantsFile, Schema: SoakVariantsSchema}

// SoakVariantsIndex is soak-variants.json: the soak's settings and one run
// per variant, in the order they ran (the base first). Each run's fit is its
// own soak.json.
type SoakVariantsIndex struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "soak-variants"
	Name          string `json:"name"`
	// Rate (tx/s per connection), Connections and Duration of every run.
	Rate        float64          `json:"rate"`
	Connections int              `json:"connections"`
	Duration    string           `json:"duration"`
	Bootstrap   int              `json:"bootstrap"`
	Seed        int64            `json:"seed"`
	Started     string           `json:"started"`
	Finished    string           `json:"finished,omitempty"`
	Complete    bool             `json:"complete"`
	Runs        []SoakVariantRun `json:"runs"`
}

// SoakVariantRun is one variant's soak.
type SoakVariantRun struct {
	Variant string `json:"variant"`
	// Label says what the variant changes against the manifest.
	Label  string `json:"label,omitempty"`
	Status string `json:"status"`            // RunPending, RunDone, RunFailed
	RunDir string `json:"run_dir,omitempty"` // relative to the soak-variants directory
	Error  string `json:"error,omitempty"`
}
