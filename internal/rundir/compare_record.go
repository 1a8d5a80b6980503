package rundir

import (
	"path/filepath"

	"github.com/benchnet/benchnet/internal/judge"
)

// A compare directory DIR/<timestamp>-<name>-compare/ (benchnet compare):
//
//	compare.json   the record [CompareIndex, CompareRecord]
//	manifest.toml  the manifest whose variants ran (compare MANIFEST)
//	runs/<id>/     their run directories (compare MANIFEST)
//	compare.md, compare.html, plots/   the report
const (
	CompareFile    = "compare.json"
	CompareRunsDir = "runs"
	CompareSchema  = 1
)

// CompareRecord is compare.json's codec: older schemas stay readable.
var CompareRecord = Record[CompareIndex]{Name: CompareFile, Schema: CompareSchema}

// Run states in compare.json.
const (
	RunPending = "pending"
	RunDone    = "done"
	RunFailed  = "failed"
)

// CompareIndex is compare.json: what was compared, every run, and the
// verdicts. It is written after every run, so an interrupted comparison
// keeps what it finished.
type CompareIndex struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "compare"
	Name          string `json:"name"`
	// Source is "manifest" (this command ran the variants) or "dirs"
	// (finished run directories given on the command line).
	Source   string `json:"source"`
	Manifest string `json:"manifest,omitempty"`
	// NodeKind is the runs' node kind: it picks the metrics judged and the
	// report's tables and plots ("" in older files: cometbft).
	NodeKind string   `json:"node_kind,omitempty"`
	Base     string   `json:"base"`
	Variants []string `json:"variants"` // the base first
	// Labels say what each variant changes against the manifest (the
	// Initia table's Config column: "validator.app=kvstore-socket"); only
	// for compare MANIFEST.
	Labels map[string]string `json:"labels,omitempty"`
	// BaseOf names another base for some variants: two sweeps compared
	// point by point, each point of a sweep against the base sweep's.
	BaseOf map[string]string `json:"base_of,omitempty"`
	// Sweeps are the sweep directories compared (label -> path), for the
	// committed-vs-offered overlay.
	Sweeps []SweepRef    `json:"sweeps,omitempty"`
	Config CompareConfig `json:"config"`
	// Seed of the bootstrap (fixed, so a re-judgement gives the same CIs).
	Seed     uint64       `json:"seed"`
	Rule     string       `json:"rule"`
	Started  string       `json:"started,omitempty"`
	Finished string       `json:"finished,omitempty"`
	Complete bool         `json:"complete"`
	Runs     []CompareRun `json:"runs"`
	// Summary: per variant, the mean of each metric over its done runs.
	Summary []VariantSummary `json:"summary"`
	// Verdicts: per variant other than the base, one judgement per metric.
	Verdicts []VariantVerdicts `json:"verdicts"`
	// Regressions lists "variant: metric" for every regression in FailOn.
	Regressions []string `json:"regressions,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// TestbedBound names the done runs left out of the verdicts because
	// their results.json is testbed_bound ("run N (variant): reasons").
	TestbedBound []string `json:"testbed_bound,omitempty"`
	ExitCode     int      `json:"exit_code"`
	// StopReason says why the runs ended: the planned repeats, or for
	// adaptive repeats (Config.MaxRepeats) decided, the maximum, the
	// budget or an interrupt. AddedRounds counts the adaptive rounds.
	StopReason  string `json:"stop_reason,omitempty"`
	AddedRounds int    `json:"added_rounds,omitempty"`
}

// CompareConfig is a comparison's settings as recorded (experiment.Compare
// is the same struct with its validation and defaults).
type CompareConfig struct {
	// Repeats is how many runs each variant gets (default 3).
	Repeats int `toml:"repeats" json:"repeats"`
	// Threshold is the regression rule in percent (default 10).
	Threshold float64 `toml:"threshold" json:"threshold_pct"`
	// FailOn lists the metrics whose regression fails the comparison
	// (exit 3); empty: every metric.
	FailOn []string `toml:"fail_on" json:"fail_on,omitempty"`
	// MaxRepeats > Repeats adds repeats adaptively, as Chromium's Pinpoint
	// does: while a judged metric (FailOn) is inconclusive, another round
	// of every variant runs, up to MaxRepeats per variant (0: no adaptive
	// repeats). The experiment's deadline bounds it in time.
	MaxRepeats int `toml:"max_repeats" json:"max_repeats,omitempty"`
	// NonInferiority judges "worse by more than the threshold?" alone: an
	// interval wholly below +T (worse-positive) is "same" however far it
	// reaches on the better side (the QA's question; judge.RegressionRule).
	NonInferiority bool `toml:"non_inferiority" json:"non_inferiority,omitempty"`
	// Equivalence asks "the same within ±threshold?" rather than
	// "regressed?": a metric is equivalent when its whole interval lies
	// within ±T, not equivalent (worse or better) when it lies wholly
	// beyond one end, and either way not equivalent fails the comparison
	// (exit 3), an undecided one leaves it inconclusive (exit 4).
	Equivalence bool `toml:"equivalence" json:"equivalence,omitempty"`
	// Paired judges each metric over the rounds' pairs (the two variants'
	// runs of one round, ratio variant/base, judge.PairedRule) instead of
	// the bootstrap: for two variants run in balanced rounds (the QA).
	Paired bool `toml:"paired" json:"paired,omitempty"`
	// Priors are the metrics' calibrated spreads a paired verdict pools
	// with the rounds' own (the QA's steady step, from its calibration).
	Priors map[string]judge.NoisePrior `toml:"-" json:"priors,omitempty"`
}

// SweepRef is one sweep of `compare SWEEP_A SWEEP_B`.
type SweepRef struct {
	Label string `json:"label"`
	Dir   string `json:"dir"`
}

// BaseFor is the variant v is judged against.
func (idx *CompareIndex) BaseFor(v string) string {
	if b, ok := idx.BaseOf[v]; ok {
		return b
	}
	return idx.Base
}

// IsBase reports whether v is judged against nothing.
func (idx *CompareIndex) IsBase(v string) bool {
	if v == idx.Base {
		return true
	}
	for _, b := range idx.BaseOf {
		if b == v {
			return true
		}
	}
	return false
}

// CompareRun is one run of one variant.
type CompareRun struct {
	Order   int    `json:"order"` // 1-based position in the run order
	Variant string `json:"variant"`
	Repeat  int    `json:"repeat"` // 1-based
	Status  string `json:"status"`
	// RunDir is relative to the compare directory when inside it, else absolute.
	RunDir string `json:"run_dir,omitempty"`
	Error  string `json:"error,omitempty"`
}

// RunPath resolves a run's directory against the compare directory root.
func (r CompareRun) RunPath(root string) string {
	if filepath.IsAbs(r.RunDir) {
		return r.RunDir
	}
	return filepath.Join(root, r.RunDir)
}

// VariantSummary is the Initia-style row of one variant.
type VariantSummary struct {
	Variant string             `json:"variant"`
	Runs    int                `json:"runs"`
	Values  map[string]float64 `json:"values"`
}

// VariantVerdicts is one variant judged against the base.
type VariantVerdicts struct {
	Variant    string            `json:"variant"`
	Base       string            `json:"base"`
	Judgements []judge.Judgement `json:"judgements"`
}
