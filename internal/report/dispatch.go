package report

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/rundir"
)

// A directory kind is known by the record in it; RenderDir renders any of
// them, so `benchnet report DIR` re-renders a run, a sweep, a comparison, a
// soak or a qa directory from its files alone.
type dirKind struct {
	record string // the record file that marks the kind
	kind   string
	// render writes the kind's report; out is where a run's report goes
	// ("" for dir itself); the other kinds render into dir only.
	render func(dir, out string) ([]string, error)
}

// dirKinds are tried in order: a parent's record before a run's, a soak's
// (a run directory with soak.json) before a plain run's.
var dirKinds = []dirKind{
	{rundir.CompareFile, "compare", func(dir, _ string) ([]string, error) { return RenderCompare(dir) }},
	{rundir.SweepFile, "sweep", func(dir, _ string) ([]string, error) { return RenderSweep(dir) }},
	{rundir.SoakFile, "soak", renderSoakRun},
}

// RegisterDir adds a kind of directory marked by record (qa.json), tried
// before the built-in ones.
func RegisterDir(record, kind string, render func(dir, out string) ([]string, error)) {
	dirKinds = append([]dirKind{{record, kind, render}}, dirKinds...)
}

// DirKind names the kind of directory dir is by the record found in it:
// compare, sweep, soak, a registered one, or "run".
func DirKind(dir string) string {
	for _, k := range dirKinds {
		if (rundir.Record[struct{}]{Name: k.record}).Exists(dir) {
			return k.kind
		}
	}
	return "run"
}

// RenderDir re-renders dir's report by its kind (DirKind). out redirects a
// run's report; the reports of the other kinds are written into dir.
func RenderDir(dir, out string) ([]string, error) {
	for _, k := range dirKinds {
		if (rundir.Record[struct{}]{Name: k.record}).Exists(dir) {
			if out != "" && k.kind != "soak" {
				return nil, fmt.Errorf("%s is a %s directory: its report is written into it (no --output)", dir, k.kind)
			}
			return k.render(dir, out)
		}
	}
	return Render(dir, out)
}

// renderSoakRun renders a soak's run report (into out when given) and its
// soak.md and soak.html (into the run directory, from soak.json).
func renderSoakRun(dir, out string) ([]string, error) {
	files, err := Render(dir, out)
	if err != nil {
		return files, err
	}
	if out != "" {
		return files, nil
	}
	soak, err := RenderSoak(dir)
	return append(files, soak...), err
}
