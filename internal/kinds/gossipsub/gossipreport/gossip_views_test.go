package gossipreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestCPUSeriesSkipsRestarts(t *testing.T) {
	v := &gossipViews{t0: 1e9}
	xy := cpuSeries(v, []rundir.Proc{
		{TimeNs: 1e9, PID: 1, CPUSeconds: 0},
		{TimeNs: 2e9, PID: 1, CPUSeconds: 0.5},
		// A restart: new pid, the counter starts over; no interval across it.
		{TimeNs: 3e9, PID: 2, CPUSeconds: 0.1},
		{TimeNs: 5e9, PID: 2, CPUSeconds: 0.5},
	})
	if len(xy) != 2 || xy[0].X != 1 || xy[0].Y != 50 || xy[1].X != 4 || xy[1].Y != 20 {
		t.Errorf("cpu series %v, want (1 s, 50 %%) and (4 s, 20 %%)", xy)
	}
}

func TestDegrees(t *testing.T) {
	// A star of 4: degrees 1, 1, 1, 3.
	if got, want := degrees(4, [][2]int{{0, 1}, {0, 2}, {0, 3}}), "; 3 links, degree min / median / max 1 / 1 / 3"; got != want {
		t.Errorf("degrees = %q, want %q", got, want)
	}
	if degrees(4, nil) != "" {
		t.Error("no edges: no degree figures")
	}
}

// A run directory without machine.json, linkem.json or proc.csv still
// renders: the parameters say what was not recorded, the plots why they
// are empty, and nothing is reported as unreadable.
func TestGossipViewsMissingFiles(t *testing.T) {
	dir := gossipRunDir(t, 2)
	for _, f := range []string{rundir.MachineFile, rundir.LinkemDir, rundir.ProcCSV.Name} {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := RenderGossip(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| machine | not recorded (no metrics/machine.json) |", "| link emulation | none (veth pairs on one bridge) |",
		"no metrics/proc.csv samples of the hosts", "## Publisher timeline"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	if strings.Contains(string(md), "Note: unreadable") {
		t.Errorf("a missing file reported as unreadable")
	}
	// An unreadable one is said.
	if err := os.WriteFile(filepath.Join(dir, rundir.MachineFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderGossip(dir, ""); err != nil {
		t.Fatal(err)
	}
	if md, _ = os.ReadFile(filepath.Join(dir, report.MarkdownFile)); !strings.Contains(string(md), "Note: unreadable, left out of this report's views: ") {
		t.Errorf("a corrupt machine.json is not reported")
	}
}
