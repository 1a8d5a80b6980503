package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// A kind's registered reports are the ones used for its runs, by plan.json's
// kind; a kind that registered none is an error that says so.
func TestRenderDispatchesOnKind(t *testing.T) {
	errFake := errors.New("the fake kind's report")
	var renderedDir string
	RegisterKind("fake-kind", Kind{Render: func(runDir, _ string) ([]string, error) {
		renderedDir = runDir
		return nil, errFake
	}})
	t.Cleanup(func() { kinds.Unregister("fake-kind") })

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), []byte(`{"kind":"fake-kind"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir, ""); !errors.Is(err, errFake) || renderedDir != dir {
		t.Errorf("Render of a fake-kind run: %v (rendered %q), want the kind's own report", err, renderedDir)
	}
	if _, err := compareView("fake-kind", &rundir.CompareIndex{}); err == nil || !strings.Contains(err.Error(), `node kind "fake-kind"`) {
		t.Errorf("compare view of a kind that registered none: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), []byte(`{"kind":"third"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir, ""); err == nil || !strings.Contains(err.Error(), `node kind "third"`) {
		t.Errorf("Render of a kind that registered no report: %v", err)
	}
}
