package experiment

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Dir is a sweep directory.
type Dir struct {
	Path  string
	Index rundir.SweepIndex
}

// Create claims root/<timestamp>-<name>-sweep with its cells/ and
// testnets/ folders.
func Create(root, name string, now time.Time) (*Dir, error) {
	path, err := rundir.ClaimStamped(root, name+"-sweep", now, rundir.SweepCells, rundir.SweepNets)
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
	idx, err := rundir.SweepRecord.Read(abs)
	if err != nil {
		return nil, err
	}
	d.Index = *idx
	return d, nil
}

// Save recomputes the judgement of the done cells and writes sweep.json
// atomically.
func (d *Dir) Save() error {
	d.Index.Judge()
	return rundir.SweepRecord.Write(d.Path, &d.Index)
}
