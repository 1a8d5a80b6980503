package rundir

import (
	"github.com/benchnet/benchnet/internal/judge"
)

// A sweep directory DIR/<timestamp>-<name>-sweep/ (benchnet sweep):
//
//	sweep.json     the record [SweepIndex, SweepRecord]
//	manifest.toml  the manifest it ran
//	cells/<id>/    one ordinary run directory per cell
//	testnets/<id>/ the run directories of the testnets the cells ran on
//	sweep.md, sweep.html, plots/   the report
const (
	SweepFile   = "sweep.json"
	SweepCells  = "cells"
	SweepNets   = "testnets"
	SweepSchema = 1
)

// SweepRecord is sweep.json's codec.
var SweepRecord = Record[SweepIndex]{Name: SweepFile, Schema: SweepSchema, Exact: true}

// Cell states of a sweep.
const (
	CellPending     = "pending"
	CellDone        = "done"
	CellInterrupted = "interrupted" // stopped mid-load: kept, re-run by --resume
	CellFailed      = "failed"
)

// SweepIndex is sweep.json: the experiment's configuration, every cell with
// its figures and verdict, and the judgement over them.
type SweepIndex struct {
	SchemaVersion int         `json:"schema_version"`
	Kind          string      `json:"kind"` // "grid" or "search"
	Name          string      `json:"name"` // the testnet's
	Config        SweepConfig `json:"config"`
	// Seed orders the cells (the manifest's seed).
	Seed     int64       `json:"seed"`
	Rule     string      `json:"rule"`
	Started  string      `json:"started"`
	Finished string      `json:"finished,omitempty"`
	Complete bool        `json:"complete"`
	Testnets []string    `json:"testnets"` // relative paths of the testnets' run directories
	Cells    []SweepCell `json:"cells"`
	// Grid is the judgement of a grid's done cells.
	Grid *judge.Grid `json:"grid,omitempty"`
	// Search is the state of a search after its done cells.
	Search *judge.SearchState `json:"search,omitempty"`
	// Groups is the judgement of a grid over variants or durations: one
	// grid per variant and duration, each judged on its own cells (its own
	// latency baseline). Grid is then the first group's.
	Groups []SweepGroup `json:"groups,omitempty"`
}

// SweepGroup is one variant's (and duration's) grid of a sweep over
// variants or durations.
type SweepGroup struct {
	Variant  string     `json:"variant,omitempty"`
	Duration Duration   `json:"duration"`
	Grid     judge.Grid `json:"grid"`
}

// SweepConfig is a sweep's settings as recorded (experiment.Sweep is the
// same struct with its validation and defaults).
type SweepConfig struct {
	// Connections and Rates span the grid (the QA reports' c and r; r is
	// tx/s per connection).
	Connections []int     `toml:"connections" json:"connections"`
	Rates       []float64 `toml:"rates" json:"rates"`
	// Duration of each cell's load.
	Duration Duration `toml:"duration" json:"duration"`
	// Durations, when given, sweep the load duration too (tx/s against test
	// duration, tm-bench's first plot): every cell runs at each of them and
	// Duration is unused.
	Durations []Duration `toml:"durations" json:"durations,omitempty"`
	// Variants are the manifest's [variants] the grid runs over (the base
	// first): every cell of the grid runs on each variant's testnet, the
	// cells of all variants shuffled together. Set from the manifest, not
	// the [sweep] table.
	Variants []string `toml:"-" json:"variants,omitempty"`
	// Repeats of the whole grid, interleaved: repeat k of every cell runs
	// before repeat k+1 of any.
	Repeats int `toml:"repeats" json:"repeats"`
	// Fresh restarts the testnet for every cell (isolation, at the cost of
	// an up per cell).
	Fresh bool `toml:"fresh" json:"fresh"`
	// Cooldown bounds the settle between cells: until every mempool is
	// empty and the chain is back at its unloaded pace.
	Cooldown Duration `toml:"cooldown" json:"cooldown"`
	// The saturation rule.
	MinCommitted  float64 `toml:"min_committed" json:"min_committed"`
	LatencyFactor float64 `toml:"latency_factor" json:"latency_factor"`

	// Search replaces the grid by a saturation search on the rate, at the
	// one connection count given.
	Search     bool    `toml:"search" json:"search"`
	StartRate  float64 `toml:"start_rate" json:"start_rate,omitempty"`
	MinRate    float64 `toml:"min_rate" json:"min_rate,omitempty"`
	MaxRate    float64 `toml:"max_rate" json:"max_rate,omitempty"`
	Precision  float64 `toml:"precision" json:"precision,omitempty"` // fraction: 0.05 = 5 %
	MinRepeats int     `toml:"min_repeats" json:"min_repeats,omitempty"`
	MaxRepeats int     `toml:"max_repeats" json:"max_repeats,omitempty"`
	Budget     int     `toml:"budget" json:"budget,omitempty"`
	// Growth is the ramp's factor; ClearMargin lets one run decide a probe
	// far from the rule's threshold (0: every probe takes min_repeats).
	Growth      float64 `toml:"growth" json:"growth,omitempty"`
	ClearMargin float64 `toml:"clear_margin" json:"clear_margin,omitempty"`
}

// Rule is the saturation rule the sweep judges with.
func (s *SweepConfig) Rule() judge.Rule {
	return judge.Rule{MinCommitted: s.MinCommitted, LatencyFactor: s.LatencyFactor}
}

// SearchConfig is the search's stopping rule.
func (s *SweepConfig) SearchConfig() judge.Search {
	return judge.Search{Start: s.StartRate, MinRate: s.MinRate, MaxRate: s.MaxRate, Precision: s.Precision,
		MinRepeats: s.MinRepeats, MaxRepeats: s.MaxRepeats, Budget: s.Budget, Growth: s.Growth, Clear: s.ClearMargin}
}

// SweepCell is one measured load of the sweep.
type SweepCell struct {
	Order       int     `json:"order"` // 1-based position in the run order
	ID          string  `json:"id"`
	Probe       int     `json:"probe,omitempty"` // search: which probe (1-based)
	Connections int     `json:"c"`
	Rate        float64 `json:"r"`
	// Variant is the manifest variant the cell ran ("" without variants);
	// Duration its load's duration when the sweep spans durations.
	Variant  string    `json:"variant,omitempty"`
	Duration *Duration `json:"duration,omitempty"`
	Repeat   int       `json:"repeat"`
	Status   string    `json:"status"`
	RunDir   string    `json:"run_dir,omitempty"` // relative to the sweep directory
	Error    string    `json:"error,omitempty"`

	// Expected is what the load was configured to send (c x r x T for a
	// round-robin target), the QA table's "expected".
	Expected int         `json:"expected,omitempty"`
	Figures  *judge.Cell `json:"figures,omitempty"`
	// RunInvalid are the run's own invalid reasons (results.json) that are
	// not about the generator (those are in Figures.LoadInvalid).
	RunInvalid []string       `json:"run_invalid,omitempty"`
	Verdict    *judge.Verdict `json:"verdict,omitempty"`

	// Timing: when the cell started, how long its measurement took (warm-up,
	// load, drain, harvest, analysis), the cool-down before it, and the gap
	// from the previous cell's end to this cell's start beyond the cool-down.
	StartedAt   string  `json:"started_at,omitempty"`
	WallSec     float64 `json:"wall_sec,omitempty"`
	CooldownSec float64 `json:"cooldown_sec,omitempty"`
	OverheadSec float64 `json:"overhead_sec,omitempty"`
	// UpSec is how long its testnet took to come up (a fresh testnet per
	// cell: the price of isolation), DownSec to go down after it.
	UpSec   float64  `json:"up_sec,omitempty"`
	DownSec float64  `json:"down_sec,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// DoneCells returns the figures of the done cells, in run order.
func (x *SweepIndex) DoneCells() []judge.Cell {
	var out []judge.Cell
	for _, c := range x.Cells {
		if c.Status == CellDone && c.Figures != nil {
			out = append(out, *c.Figures)
		}
	}
	return out
}

// Judge recomputes every done cell's verdict, the grid's saturation point
// or the search's state: a pure function of the cells' figures and the
// config's rule, so a report re-judges any record, old ones included, to
// the same bytes.
func (x *SweepIndex) Judge() {
	rule := x.Config.Rule()
	x.Rule = rule.String()
	done := x.DoneCells()
	base := judge.BaselineP50(done)
	for i := range x.Cells {
		c := &x.Cells[i]
		if c.Status == CellDone && c.Figures != nil {
			v := rule.Judge(*c.Figures, base)
			c.Verdict = &v
		} else {
			c.Verdict = nil
		}
	}
	if x.Kind == "search" {
		st := x.Config.SearchConfig().Step(rule, done)
		x.Search = &st
		x.Rule = st.Rule
		return
	}
	if x.Grouped() {
		x.judgeGroups(rule)
		return
	}
	g := rule.JudgeGrid(done)
	x.Grid = &g
}

// Grouped reports whether the sweep spans variants or durations: its cells
// are then judged group by group (SweepGroup).
func (x *SweepIndex) Grouped() bool {
	return x.Kind != "search" && (len(x.Config.Variants) > 0 || len(x.Config.Durations) > 0)
}

// CellDuration is the load duration of a cell.
func (x *SweepIndex) CellDuration(c SweepCell) Duration {
	if c.Duration != nil {
		return *c.Duration
	}
	return x.Config.Duration
}

// GroupKeys are the sweep's (variant, duration) groups in their order:
// variants as configured (the base first), then durations ascending.
func (x *SweepIndex) GroupKeys() []SweepGroup {
	vs := x.Config.Variants
	if len(vs) == 0 {
		vs = []string{""}
	}
	ds := x.Config.Durations
	if len(ds) == 0 {
		ds = []Duration{x.Config.Duration}
	}
	var out []SweepGroup
	for _, v := range vs {
		for _, d := range ds {
			out = append(out, SweepGroup{Variant: v, Duration: d})
		}
	}
	return out
}

// judgeGroups judges each group's done cells on their own: a variant's
// latency baseline is its own lightest load, and its verdicts never mix
// with another variant's cells.
func (x *SweepIndex) judgeGroups(rule judge.Rule) {
	x.Groups = nil
	for _, g := range x.GroupKeys() {
		var done []judge.Cell
		var idx []int
		for i, c := range x.Cells {
			if c.Variant != g.Variant || x.CellDuration(c) != g.Duration {
				continue
			}
			if c.Status == CellDone && c.Figures != nil {
				done = append(done, *c.Figures)
				idx = append(idx, i)
			}
		}
		base := judge.BaselineP50(done)
		for _, i := range idx {
			v := rule.Judge(*x.Cells[i].Figures, base)
			x.Cells[i].Verdict = &v
		}
		g.Grid = rule.JudgeGrid(done)
		x.Groups = append(x.Groups, g)
	}
	x.Grid = &x.Groups[0].Grid
}

// Group is the sweep restricted to one group: its cells, its grid, and a
// config of one variant and one duration (the report's per-variant
// tables reuse the plain grid's).
func (x *SweepIndex) Group(g SweepGroup) *SweepIndex {
	y := *x
	y.Config.Variants, y.Config.Durations = nil, nil
	y.Config.Duration = g.Duration
	y.Cells = nil
	for _, c := range x.Cells {
		if c.Variant == g.Variant && x.CellDuration(c) == g.Duration {
			y.Cells = append(y.Cells, c)
		}
	}
	grid := g.Grid
	y.Grid, y.Groups = &grid, nil
	return &y
}
