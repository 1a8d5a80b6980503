package experiment

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// thrRun copies the report's stored run directory (4 validators, 5.5 tx/s
// committed) into a temporary place.
func thrRun(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run1")
	if out, err := exec.Command("cp", "-r", "../kinds/cometbft/chainreport/testdata/run1", dst).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v: %s", err, out)
	}
	return dst
}

func thrManifest(t *testing.T, conds string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse("m.toml", []byte("name = \"t\"\n[node.validator]\ncount = 4\n[thresholds]\n"+conds))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestApplyThresholds(t *testing.T) {
	for _, tc := range []struct {
		name, conds string
		fail        []string // substrings of the verdict's message; nil: pass
	}{
		{"pass", "tps = \"> 5\"\nlatency_p99 = \"< 2s\"\ncommitted = \">= 90%\"\nlost = \"<= 3\"\n", nil},
		{"tps too low", "tps = \"> 180\"\nlatency_p99 = \"< 2s\"\n", []string{"threshold failed: tps > 180: was 5.5 tx/s"}},
		{"latency too high", "latency_p99 = \"< 100ms\"\n", []string{"latency_p99 < 100ms: was 1.167s"}},
		{"not measured", "caught_up = \"== true\"\nhalted = \"== false\"\n", []string{"caught_up == true: not measured", "halted == false: not measured"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := thrRun(t)
			m := thrManifest(t, tc.conds)
			rs, err := ApplyThresholds(dir, m)
			if len(rs) != len(m.Thresholds) {
				t.Fatalf("%d results for %d thresholds", len(rs), len(m.Thresholds))
			}
			if tc.fail == nil {
				if err != nil {
					t.Fatalf("want pass: %v", err)
				}
			} else {
				var ve *VerdictError
				if !errors.As(err, &ve) || ve.Verdict != Fail {
					t.Fatalf("want a Fail verdict, got %v", err)
				}
				if code, ok := ExitCodeOf(err); !ok || code != 3 {
					t.Errorf("exit code %d, want 3", code)
				}
				for _, w := range tc.fail {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%q lacks %q", err, w)
					}
				}
			}
			// results.json records them, in file order.
			res, rerr := (&rundir.Dir{Path: dir}).ReadResults()
			if rerr != nil {
				t.Fatal(rerr)
			}
			if len(res.Thresholds) != len(rs) || res.Thresholds[0].Metric != strings.SplitN(tc.conds, " ", 2)[0] {
				t.Errorf("results.json thresholds %+v", res.Thresholds)
			}
			if failed := judge.ThresholdsFailed(res.Thresholds, "cometbft"); (len(failed) == 0) != (tc.fail == nil) {
				t.Errorf("recorded failures %q", failed)
			}
		})
	}
}

// A run whose faults.json says the chain halted and a rotate cycle never
// caught up fails `halted == false` and `caught_up == true`.
func TestThresholdValuesFaults(t *testing.T) {
	dir := thrRun(t)
	d := &rundir.Dir{Path: dir}
	fr := &rundir.FaultResults{Halted: "no block for 30s", Cycles: []rundir.Cycle{{CatchUpS: 3}, {CatchUpS: -1}}}
	if err := d.WriteFaults(fr); err != nil {
		t.Fatal(err)
	}
	vals, err := ThresholdValues(dir, "cometbft")
	if err != nil {
		t.Fatal(err)
	}
	if vals["halted"] != 1 || vals["caught_up"] != 0 {
		t.Errorf("halted %v caught_up %v, want 1 and 0", vals["halted"], vals["caught_up"])
	}
	fr.Halted, fr.Cycles[1].CatchUpS = "", 4
	if err := d.WriteFaults(fr); err != nil {
		t.Fatal(err)
	}
	if vals, _ = ThresholdValues(dir, "cometbft"); vals["halted"] != 0 || vals["caught_up"] != 1 {
		t.Errorf("halted %v caught_up %v, want 0 and 1", vals["halted"], vals["caught_up"])
	}
	_ = os.Remove(filepath.Join(dir, rundir.FaultsFile))
}

// The verdict of several runs (compare, sweep): per run, each failing run
// named; a sweep cell whose load generator could not keep up is neither
// pass nor fail.
func TestRunsThresholdError(t *testing.T) {
	root := t.TempDir()
	mk := func(name, conds string, harnessInvalid bool) string {
		dir := filepath.Join(root, name)
		if out, err := exec.Command("cp", "-r", "../kinds/cometbft/chainreport/testdata/run1", dir).CombinedOutput(); err != nil {
			t.Fatalf("copy: %v: %s", err, out)
		}
		_, _ = ApplyThresholds(dir, thrManifest(t, conds))
		if harnessInvalid {
			d := &rundir.Dir{Path: dir}
			res, _ := d.ReadResults()
			res.GeneratorInvalid = []string{"generator lag p99 300 ms"}
			if err := d.WriteResults(res); err != nil {
				t.Fatal(err)
			}
		}
		return name
	}
	pass := mk("pass", "tps = \"> 5\"\n", false)
	fail := mk("fail", "tps = \"> 180\"\n", false)
	invalid := mk("invalid", "tps = \"> 180\"\n", true)
	if err := RunsThresholdError(root, []string{pass}); err != nil {
		t.Errorf("a passing run: %v", err)
	}
	err := RunsThresholdError(root, []string{pass, fail, invalid})
	if code, ok := ExitCodeOf(err); !ok || code != 3 || !strings.Contains(err.Error(), "threshold failed in 2 run(s): fail: tps > 180") {
		t.Errorf("compare's rule (every run): %v", err)
	}
	if err := runsThresholdError(root, []string{pass, invalid}, true); err != nil {
		t.Errorf("a harness-invalid cell is neither pass nor fail: %v", err)
	}
	if err := runsThresholdError(root, []string{pass, fail, invalid}, true); err == nil || !strings.Contains(err.Error(), "in 1 run(s): fail:") {
		t.Errorf("sweep's rule: %v", err)
	}
}
