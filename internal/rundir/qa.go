package rundir

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/judge"
)

// A QA directory DIR/<time>-<name>-qa/ holds one ordinary experiment
// directory per step (steps/<step>/) and qa.json indexing them.
const (
	QAFile     = "qa.json"
	QAStepsDir = "steps"
	// QASchema is qa.json's schema_version.
	QASchema = 1
)

// Step states in qa.json.
const (
	StepPending = "pending"
	StepDone    = "done"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// QAIndex is qa.json: the builds, the plan, every step and its outcome,
// and the Test Results. Written after every step: an interrupted QA keeps
// what it finished, and `benchnet qa --resume DIR` goes on from it.
type QAIndex struct {
	SchemaVersion int     `json:"schema_version"`
	Kind          string  `json:"kind"` // "qa"
	Name          string  `json:"name"`
	Baseline      QABuild `json:"baseline"`
	Candidate     QABuild `json:"candidate"`
	// Manifest and RotateManifest are the testbeds' files as given,
	// copied into the directory (manifest.toml, rotate.toml).
	Manifest       string `json:"manifest"`
	RotateManifest string `json:"rotate_manifest,omitempty"`
	Profile        string `json:"profile"` // "default" or "quick"
	// Config is the QA configuration (experiment.QA) as decoded.
	Config json.RawMessage `json:"config"`
	// BaselineFrom is the QA directory whose baseline runs were reused.
	BaselineFrom string   `json:"baseline_from,omitempty"`
	Plan         QAPlan   `json:"plan"`
	Started      string   `json:"started"`
	Finished     string   `json:"finished,omitempty"`
	Complete     bool     `json:"complete"`
	Steps        []QAStep `json:"steps"`
	// Saturation is step 1's outcome.
	Saturation *QASaturation `json:"saturation,omitempty"`
	// Results is the Test Results table; Overall the worst of them.
	Results  []QAResult   `json:"results"`
	Overall  judge.Result `json:"overall,omitempty"`
	ExitCode int          `json:"exit_code"`
	Machine  *Machine     `json:"machine,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	// Calibration is the lab's noise this QA judged with: the spreads of
	// this machine's and testbed's A/A runs, pooled with the QA's own
	// (judge.NoisePrior); nil when none was recorded.
	Calibration *QACalibration `json:"calibration,omitempty"`
}

// QACalibration is the part of a calibration record a QA judges with.
type QACalibration struct {
	Made string `json:"made"`
	QAs  int    `json:"qas"`
	// Capacity: the pairs' spread; Steady: each steady metric's rounds'.
	Capacity judge.NoisePrior            `json:"capacity"`
	Steady   map[string]judge.NoisePrior `json:"steady,omitempty"`
}

// QABuild is one build under test: the reference as given and what it
// resolved to (the commit, when known).
type QABuild struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit,omitempty"`
}

// Version is the Test Results' Version column: reference and commit.
func (b QABuild) Version() string {
	if b.Commit == "" {
		return b.Ref
	}
	c := b.Commit
	if len(c) > 12 && strings.Trim(c[:12], "0123456789abcdef") == "" {
		c = c[:12] // a commit hash
	}
	return b.Ref + " (" + c + ")"
}

// QAPlan is what the QA said it would do before it started.
type QAPlan struct {
	Steps []QAPlannedStep `json:"steps"`
	Runs  int             `json:"runs"`
	// WallS is the estimated wall time, BudgetS the bound it had to fit.
	WallS   float64 `json:"wall_s"`
	BudgetS float64 `json:"budget_s"`
	// DiskBytes is the estimated space needed, FreeBytes what was free.
	DiskBytes int64    `json:"disk_bytes"`
	FreeBytes int64    `json:"free_bytes"`
	Notes     []string `json:"notes,omitempty"`
}

// QAPlannedStep is one step of the plan.
type QAPlannedStep struct {
	Name      string  `json:"name"`
	Runs      int     `json:"runs"`
	WallS     float64 `json:"wall_s"`
	DiskBytes int64   `json:"disk_bytes"`
	What      string  `json:"what"`
}

// QAStep is one step as it ran: an ordinary experiment directory (a
// sweep, a compare or a run directory) under steps/.
type QAStep struct {
	Name   string `json:"name"`   // saturation-baseline, steady, le, rotate-candidate, …
	Kind   string `json:"kind"`   // sweep | compare | run
	Build  string `json:"build"`  // baseline | candidate | both
	Dir    string `json:"dir"`    // relative to the QA directory (or absolute when reused)
	Status string `json:"status"` // pending | done | failed | skipped
	// Reused: the step's directory comes from --baseline-from.
	Reused   bool    `json:"reused,omitempty"`
	Started  string  `json:"started,omitempty"`
	Finished string  `json:"finished,omitempty"`
	WallS    float64 `json:"wall_s,omitempty"`
	// Runs is how many runs (testnets) the step made: with WallS, the
	// machine's time per run, which the budget scales the later steps'
	// plans by. 0 in a qa.json from before 2026-11-29 (late).
	Runs  int    `json:"runs,omitempty"`
	Error string `json:"error,omitempty"`
	Note  string `json:"note,omitempty"`
}

// QASaturation is step 1's outcome: both brackets, the chosen load and the
// judgement of the candidate's saturation against the baseline's.
type QASaturation struct {
	Connections int            `json:"connections"`
	Baseline    judge.Interval `json:"baseline"`
	Candidate   judge.Interval `json:"candidate"`
	// Margin is the back-off from the baseline's saturation (fraction);
	// Rate the chosen per-connection rate: Baseline.Lo x (1 - Margin).
	Margin float64 `json:"margin"`
	Rate   float64 `json:"rate"`
	// RateFrom says where Rate came from when not the baseline's highest
	// sustainable rate ("": from it).
	RateFrom string        `json:"rate_from,omitempty"`
	Verdict  judge.Outcome `json:"verdict"`
	Why      string        `json:"why"`
	// OverloadRate is the per-connection rate of the paired runs (above
	// the baseline's saturation); Pairs their measurements in the order
	// run, Paired the decision over them (absent in QAs recorded before
	// the paired step: their verdict compared the two brackets).
	OverloadRate float64              `json:"overload_rate,omitempty"`
	Pairs        []QAPair             `json:"pairs,omitempty"`
	Paired       *judge.PairedVerdict `json:"paired,omitempty"`
}

// QAPair is one pair of the saturation step: a run of each build at the
// overload rate, back to back, in the order First then the other.
type QAPair struct {
	First string `json:"first"` // the build that ran first
	// BaseTPS, CandTPS: the runs' committed tx/s over their busy spans
	// (their capacity under overload, see BusyShare); the run directories
	// relative to the QA directory.
	BaseTPS float64 `json:"base_tps"`
	CandTPS float64 `json:"cand_tps"`
	BaseDir string  `json:"base_dir"`
	CandDir string  `json:"cand_dir"`
	// BaseExcluded, CandExcluded say why a side's run does not count (it
	// was testbed-bound, failed, or committed nothing): the pair is left
	// out of the decision.
	BaseExcluded string `json:"base_excluded,omitempty"`
	CandExcluded string `json:"cand_excluded,omitempty"`
	// Rate is the pair's load (tx/s per connection); Below, when set, says
	// the baseline kept up with it: not an overload, so the pair measured
	// the offered rate, not a capacity, and does not count.
	Rate  float64 `json:"rate,omitempty"`
	Below string  `json:"below_capacity,omitempty"`
}

// Excluded is why the pair does not count ("": it counts).
func (p QAPair) Excluded() string {
	var why []string
	if p.Below != "" {
		why = append(why, p.Below)
	}
	if p.BaseExcluded != "" {
		why = append(why, QABaseline+": "+p.BaseExcluded)
	}
	if p.CandExcluded != "" {
		why = append(why, QACandidate+": "+p.CandExcluded)
	}
	return strings.Join(why, "; ")
}

// CandidateBroken: the candidate's run failed or committed nothing while
// the baseline's, beside it, counted; a testbed-bound run is the
// machine's, not the build's.
func (p QAPair) CandidateBroken() bool {
	return p.BaseExcluded == "" && p.CandExcluded != "" && !strings.HasPrefix(p.CandExcluded, TestbedBoundPrefix)
}

// TestbedBoundPrefix starts the reason of a run excluded because the
// testbed, not the build, bound it.
const TestbedBoundPrefix = "testbed-bound"

// JudgePairs is the pairs as the paired rule reads them.
func (s *QASaturation) JudgePairs() []judge.Pair {
	var ps []judge.Pair
	for _, p := range s.Pairs {
		ps = append(ps, judge.Pair{Base: p.BaseTPS, Cand: p.CandTPS, Excluded: p.Excluded()})
	}
	return ps
}

// QAResult is one row of Test Results.
type QAResult struct {
	Scenario string       `json:"scenario"`
	Date     string       `json:"date"`
	Version  string       `json:"version"`
	Result   judge.Result `json:"result"`
	Why      string       `json:"why"`
	// Judged: false for a scenario reported but not judged (latency
	// emulation without --judge-le); it does not count in Overall.
	Judged bool `json:"judged"`
}

// Step returns the step named name (nil: none).
func (x *QAIndex) Step(name string) *QAStep {
	for i := range x.Steps {
		if x.Steps[i].Name == name {
			return &x.Steps[i]
		}
	}
	return nil
}

// StepPath resolves a step's directory against the QA directory.
func StepPath(root string, s *QAStep) string {
	if s == nil || s.Dir == "" {
		return ""
	}
	if filepath.IsAbs(s.Dir) {
		return s.Dir
	}
	return filepath.Join(root, s.Dir)
}

// QARecord is qa.json's codec: written after every step, read by resume,
// the report, the history and the calibration record; a newer schema or
// another kind is refused.
var QARecord = Record[QAIndex]{Name: QAFile, Schema: QASchema, Check: func(x *QAIndex) error {
	if x.Kind != "qa" {
		return fmt.Errorf("kind %q, want \"qa\"", x.Kind)
	}
	return nil
}}

// QAConfig is the QA configuration qa.json carries (experiment.QA, which
// owns its defaults and validation).
type QAConfig struct {
	// Step 1: the saturation point, per build. Search (default) or Grid.
	Grid        bool      `toml:"grid" json:"grid"`
	Connections int       `toml:"connections" json:"connections"`
	Rates       []float64 `toml:"rates" json:"rates,omitempty"` // the grid's r (tx/s per connection)
	// ProbeDuration is each search probe's (or grid cell's) load.
	ProbeDuration Duration `toml:"probe_duration" json:"probe_duration"`
	StartRate     float64  `toml:"start_rate" json:"start_rate,omitempty"`
	MaxRate       float64  `toml:"max_rate" json:"max_rate,omitempty"`
	Precision     float64  `toml:"precision" json:"precision,omitempty"`
	ProbeRepeats  int      `toml:"probe_repeats" json:"probe_repeats,omitempty"` // a probe's minimum repeats
	ProbeMax      int      `toml:"probe_max_repeats" json:"probe_max_repeats,omitempty"`
	SearchBudget  int      `toml:"search_budget" json:"search_budget,omitempty"` // probes per build
	// Margin backs the chosen load off the baseline's saturation rate:
	// rate = saturation x (1 - margin), half of it by default (docs/qa.md:
	// near saturation the steady latency is too noisy to judge).
	Margin float64 `toml:"margin" json:"margin"`
	// SaturationThreshold judges the candidate's saturation against the
	// baseline's, in percent.
	SaturationThreshold float64 `toml:"saturation_threshold" json:"saturation_threshold_pct"`
	// The paired decision: MinPairs to MaxPairs pairs of runs, one of each
	// build in PairOrder, at Overload x the baseline's highest sustainable
	// rate, each PairDuration long.
	MinPairs     int      `toml:"min_pairs" json:"min_pairs,omitempty"`
	MaxPairs     int      `toml:"max_pairs" json:"max_pairs,omitempty"`
	Overload     float64  `toml:"overload" json:"overload,omitempty"`
	PairDuration Duration `toml:"pair_duration" json:"pair_duration,omitempty"`
	// PairOrder is the pairs' run order: PairOrderABAB (the baseline
	// first in every pair, so the builds' runs alternate and none runs
	// twice in a row) or PairOrderABBA (AB, BA, AB, …; one build twice in
	// a row at every pair boundary). Empty, as in a qa.json from before
	// the key (2026-11-29): ABBA.
	PairOrder string `toml:"pair_order" json:"pair_order,omitempty"`

	// Steps 2 and 3: the steady test at the chosen load, and again with
	// latency emulation.
	Duration   Duration `toml:"duration" json:"duration"`
	Repeats    int      `toml:"repeats" json:"repeats"`
	MaxRepeats int      `toml:"max_repeats" json:"max_repeats"`
	Threshold  float64  `toml:"threshold" json:"threshold_pct"`
	FailOn     []string `toml:"fail_on" json:"fail_on"`
	// LE runs step 3; LERepeats its repeats per build (not adaptive: it
	// is reported, judged only with JudgeLE).
	LE        bool `toml:"latency_emulation" json:"latency_emulation"`
	LERepeats int  `toml:"le_repeats" json:"le_repeats"`
	JudgeLE   bool `toml:"judge_le" json:"judge_le"`

	// Step 4: rotating nodes. Rotate names the rotating testbed's
	// manifest (relative to the QA manifest; built-ins from examples/);
	// Cycles and LoadDuration override its [rotate] cycles and load.
	Rotate           string   `toml:"rotate" json:"rotate"`
	Cycles           int      `toml:"cycles" json:"cycles"`
	RotateDuration   Duration `toml:"rotate_duration" json:"rotate_duration"`
	CatchUpThreshold float64  `toml:"catchup_threshold" json:"catchup_threshold_pct"`
	CatchUpFloor     Duration `toml:"catchup_floor" json:"catchup_floor"`
}

// The two builds of a QA: their step directories and labels.
const (
	QABaseline  = "baseline"
	QACandidate = "candidate"
)

// BusyShare is the share of a run's committed txs a saturation pair's busy
// span covers (QAPair's BaseTPS, CandTPS): from the load's start to the
// block by which this share was in. The last 1 % may straggle in
// (rechecked, re-gossiped) well after the backlog drained, and measures
// the mempool's retry path, not capacity.
const BusyShare = 0.99

// The paired step's run orders (QAConfig.PairOrder).
const (
	PairOrderABAB = "abab"
	PairOrderABBA = "abba"
)

// PairOrderWords says how order orders a QA's pairs, for its plan and
// report.
func PairOrderWords(order string) string {
	if order == PairOrderABAB {
		return "the baseline first in every pair, so the builds' runs alternate and neither runs twice in a row"
	}
	return "alternating which build runs first (AB, BA, ...)"
}
