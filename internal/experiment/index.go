package experiment

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// File names of a sweep directory DIR/<timestamp>-<name>-sweep/; its
// record is rundir's (rundir.SweepRecord).
const (
	IndexFile = rundir.SweepFile
	CellsDir  = rundir.SweepCells // one ordinary run directory per cell
	NetsDir   = rundir.SweepNets  // the run directories of the testnets the cells ran on
)

// SchemaVersion of sweep.json.
const SchemaVersion = rundir.SweepSchema

// Cell states.
const (
	Pending     = rundir.CellPending
	Done        = rundir.CellDone
	Interrupted = rundir.CellInterrupted // stopped mid-load: kept, re-run by --resume
	Failed      = rundir.CellFailed
)

// Index is sweep.json: the experiment's configuration, every cell with its
// figures and verdict, and the judgement over them. Written after every
// cell, so an interrupted sweep keeps what it finished.
type Index = rundir.SweepIndex

// CellRecord is one measured load of the sweep.
type CellRecord = rundir.SweepCell

// Dir is a sweep directory.
type Dir struct {
	Path  string
	Index Index
}

// Create claims root/<timestamp>-<name>-sweep with its cells/ and
// testnets/ folders.
func Create(root, name string, now time.Time) (*Dir, error) {
	path, err := rundir.ClaimStamped(root, name+"-sweep", now, CellsDir, NetsDir)
	if err != nil {
		return nil, fmt.Errorf("create sweep directory: %w", err)
	}
	return &Dir{Path: path}, nil
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
func ReadIndex(dir string) (*Index, error) { return rundir.SweepRecord.Read(dir) }

// Save recomputes the judgement of the done cells and writes sweep.json
// atomically.
func (d *Dir) Save() error {
	Judge(&d.Index)
	return rundir.SweepRecord.Write(d.Path, &d.Index)
}

// Judge recomputes every done cell's verdict, the grid's saturation point
// or the search's state (rundir.SweepIndex.Judge: the report re-judges an
// old record the same way).
func Judge(x *Index) { x.Judge() }
