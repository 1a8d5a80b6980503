// Package report is the frame of every report: it renders a run directory
// with the run report its node kind registered (RegisterKind; CometBFT's
// and gossipsub's live under internal/kinds), and it writes the reports of
// the experiments above one run itself: sweep, soak, compare (with the
// kind's CompareView), qa, and the thresholds sections. Each is
// report.md-style Markdown (GitHub-renderable, PNG plots in plots/ beside
// it) and a self-contained HTML file (plots embedded as data URIs, opens
// offline).
//
// A report is a pure function of its directory: it reads only the files
// the earlier stages wrote, never asks a node anything, and writes the
// same bytes for the same data (times relative to an origin taken from the
// data, iteration sorted, floats at fixed precision). A missing file makes
// its table or plot say "no data". `benchnet report DIR` re-renders any of
// them (RenderDir).
package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names, relative to the output directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Render reads the run directory runDir and writes the report into outDir
// (runDir when ""), with the reports its kind registered (plan.json's kind).
// It returns the paths written, report.md first. Only an unreadable run
// directory or an unwritable output fails it.
func Render(runDir, outDir string) ([]string, error) {
	if err := CheckRunDir(runDir); err != nil {
		return nil, err
	}
	k, kind, err := kindOfRun(runDir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if k.Render == nil {
		return nil, fmt.Errorf("report: no run report for node kind %q in this binary (have %v; import internal/kinds)", kind, kinds.Names())
	}
	return k.Render(runDir, outDir)
}

// RenderZoomed renders a run's report with its time plots zoomed into
// outDir, which must not be the run directory: the run's own report stays
// the whole run, byte-identical to what the run wrote.
func RenderZoomed(runDir, outDir string, z Zoom) ([]string, error) {
	if outDir == "" {
		return nil, fmt.Errorf("report: a zoomed report needs an output directory (-o), the run directory keeps the whole run's")
	}
	if err := CheckRunDir(runDir); err != nil {
		return nil, err
	}
	k, kind, err := kindOfRun(runDir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if k.Zoomed == nil {
		return nil, fmt.Errorf("report: the run report of node kind %q has no zoom (--xrange/--yrange)", kind)
	}
	return k.Zoomed(runDir, outDir, z)
}

// ErrNotRunDir is returned for a path that is not a run directory.
var ErrNotRunDir = errors.New("not a run directory")

// CheckRunDir fails with ErrNotRunDir unless path is a directory holding
// any of a run's files.
func CheckRunDir(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotRunDir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrNotRunDir, path)
	}
	if !isRunDir(path) {
		return fmt.Errorf("%w: %s has none of %s, %s, %s, %s, %s", ErrNotRunDir, path,
			rundir.Plan, rundir.Manifest, rundir.Events, rundir.TxsCSV.Name, rundir.ResultsFile)
	}
	return nil
}

// isRunDir: a directory with at least one file only a run writes.
func isRunDir(path string) bool {
	for _, f := range []string{rundir.Plan, rundir.Manifest, rundir.Events, rundir.TxsCSV.Name, rundir.ResultsFile} {
		if _, err := os.Stat(filepath.Join(path, f)); err == nil {
			return true
		}
	}
	return false
}
