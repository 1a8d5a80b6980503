package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// File names of a sweep directory DIR/<timestamp>-<name>-sweep/.
const (
	IndexFile = "sweep.json"
	CellsDir  = "cells"    // one ordinary run directory per cell
	NetsDir   = "testnets" // the run directories of the testnets the cells ran on
)

// SchemaVersion of sweep.json; bump it when a field changes meaning.
const SchemaVersion = 1

// Cell states.
const (
	Pending     = "pending"
	Done        = "done"
	Interrupted = "interrupted" // stopped mid-load: kept, re-run by --resume
	Failed      = "failed"
)

// Index is sweep.json: the experiment's configuration, every cell with its
// figures and verdict, and the judgement over them. Written after every
// cell, so an interrupted sweep keeps what it finished.
type Index struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "grid" or "search"
	Name          string `json:"name"` // the testnet's
	Config        Sweep  `json:"config"`
	// Seed orders the cells (the manifest's seed).
	Seed     int64        `json:"seed"`
	Rule     string       `json:"rule"`
	Started  string       `json:"started"`
	Finished string       `json:"finished,omitempty"`
	Complete bool         `json:"complete"`
	Testnets []string     `json:"testnets"` // relative paths of the testnets' run directories
	Cells    []CellRecord `json:"cells"`
	// Grid is the judgement of a grid's done cells.
	Grid *judge.Grid `json:"grid,omitempty"`
	// Search is the state of a search after its done cells.
	Search *judge.SearchState `json:"search,omitempty"`
}

// CellRecord is one measured load of the sweep.
type CellRecord struct {
	Order       int     `json:"order"` // 1-based position in the run order
	ID          string  `json:"id"`
	Probe       int     `json:"probe,omitempty"` // search: which probe (1-based)
	Connections int     `json:"c"`
	Rate        float64 `json:"r"`
	Repeat      int     `json:"repeat"`
	Status      string  `json:"status"`
	RunDir      string  `json:"run_dir,omitempty"` // relative to the sweep directory
	Error       string  `json:"error,omitempty"`

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
	StartedAt   string   `json:"started_at,omitempty"`
	WallSec     float64  `json:"wall_sec,omitempty"`
	CooldownSec float64  `json:"cooldown_sec,omitempty"`
	OverheadSec float64  `json:"overhead_sec,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Dir is a sweep directory.
type Dir struct {
	Path  string
	Index Index
}

// Create makes root/<timestamp>-<name>-sweep; os.Mkdir makes the check and
// the creation one step, so two sweeps started in the same second differ.
func Create(root, name string, now time.Time) (*Dir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create sweep directory: %w", err)
	}
	base := filepath.Join(root, now.UTC().Format("20060102-150405")+"-"+name+"-sweep")
	path := base
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return nil, fmt.Errorf("create sweep directory: %w", err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	for _, sub := range []string{CellsDir, NetsDir} {
		if err := os.Mkdir(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, fmt.Errorf("create sweep directory: %w", err)
		}
	}
	return &Dir{Path: abs}, nil
}

// Open reads an existing sweep directory's index.
func Open(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: abs}
	idx, err := ReadIndex(abs)
	if err != nil {
		return nil, err
	}
	d.Index = *idx
	return d, nil
}

// ReadIndex reads dir/sweep.json, refusing a schema it does not know.
func ReadIndex(dir string) (*Index, error) {
	data, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		return nil, fmt.Errorf("read sweep index: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("decode %s: %w", filepath.Join(dir, IndexFile), err)
	}
	if idx.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this benchnet reads %d", filepath.Join(dir, IndexFile), idx.SchemaVersion, SchemaVersion)
	}
	return &idx, nil
}

// Save recomputes the judgement of the done cells and writes sweep.json
// atomically.
func (d *Dir) Save() error {
	d.Index.Judge()
	data, err := json.MarshalIndent(d.Index, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", IndexFile, err)
	}
	return rundir.WriteAtomic(filepath.Join(d.Path, IndexFile), append(data, '\n'))
}

// DoneCells returns the figures of the done cells, in run order.
func (x *Index) DoneCells() []judge.Cell {
	var out []judge.Cell
	for _, c := range x.Cells {
		if c.Status == Done && c.Figures != nil {
			out = append(out, *c.Figures)
		}
	}
	return out
}

// Judge recomputes every done cell's verdict, the grid's saturation point
// or the search's state: a pure function of the cells' figures.
func (x *Index) Judge() {
	rule := x.Config.Rule()
	x.Rule = rule.String()
	done := x.DoneCells()
	base := judge.BaselineP50(done)
	for i := range x.Cells {
		c := &x.Cells[i]
		if c.Status == Done && c.Figures != nil {
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
	g := rule.JudgeGrid(done)
	x.Grid = &g
}
