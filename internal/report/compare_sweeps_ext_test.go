package report_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Two sweeps: the comparison report overlays their committed-vs-offered
// curves.
func TestRenderCompareSweeps(t *testing.T) {
	root := t.TempDir()
	var dirs []experiment.DirVariant
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(root, name)
		if out, err := exec.Command("cp", "-r", "testdata/sweep1", dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		x, err := rundir.SweepRecord.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range x.Cells {
			if c.Status == rundir.CellDone && c.RunDir != "" {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, c.RunDir)), 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("cp", "-r", report.ChainRun, filepath.Join(dir, c.RunDir)).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v %s", err, out)
				}
			}
		}
		dirs = append(dirs, experiment.DirVariant{Name: name, Dirs: []string{dir}})
	}
	cmp, idx, err := experiment.CompareDirs(dirs, experiment.DefaultCompare(), filepath.Join(root, "out"), false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Sweeps) != 2 {
		t.Fatalf("sweeps: %v", idx.Sweeps)
	}
	if _, err := report.RenderCompare(cmp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cmp, page.PlotsDir, "cmp_sweep_throughput.png")); err != nil {
		md, _ := os.ReadFile(filepath.Join(cmp, report.CompareMarkdownFile))
		t.Fatalf("no sweep overlay: %v\n%s", err, md)
	}
}
