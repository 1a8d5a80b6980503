package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyDir copies a run directory fixture (files and subdirectories).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

func TestCompareExitCodes(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	copyDir(t, "../../internal/kinds/cometbft/chainreport/testdata/run1", a)
	copyDir(t, "../../internal/kinds/cometbft/chainreport/testdata/run1", b)
	bad := filepath.Join(tmp, "bad.toml")
	if err := os.WriteFile(bad, []byte("[node.validator]\ncount = 2\n[variants.a]\n[variants.b]\nnode.validator.release = \"v1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"compare", "../../examples/quickstart.toml"}, exitUsage}, // no variants
		{[]string{"compare", bad}, exitUsage},
		{[]string{"compare", "--repeats", "0", "../../examples/compare-db.toml"}, exitUsage},
		{[]string{"compare", "--fail-on", "tps,nope", "../../examples/compare-db.toml"}, exitUsage},
		{[]string{"compare", "--threshold", "-5", a, b}, exitUsage},
		{[]string{"compare", a, tmp}, exitUsage}, // not a run directory
		{[]string{"compare", a}, exitUsage},      // one variant
		{[]string{"compare", a, b, "--output", out}, exitOK},
		// A gossip series: tx-load flags and tx metrics do not apply; a
		// publish rate of 0 is refused by its flag.
		{[]string{"compare", "--connections", "2", "../../examples/gossip-series1.toml"}, exitUsage},
		{[]string{"compare", "--rate", "0", "../../examples/gossip-series1.toml"}, exitUsage},
		{[]string{"compare", "--fail-on", "tps", "../../examples/gossip-series1.toml"}, exitUsage},
	} {
		if got := run(tc.args); got != tc.want {
			t.Errorf("benchnet %s: exit %d, want %d", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	// The bad variant is reported at its line.
	msg := runBinary(t, "compare", bad)
	if !strings.Contains(msg, bad+":5: variants.b.node.validator.release:") {
		t.Errorf("message lacks the variant's line:\n%s", msg)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-compare"))
	if len(dirs) != 1 {
		t.Fatalf("compare directories: %v", dirs)
	}
	for _, f := range []string{"compare.json", "compare.md", "compare.html", "plots/cmp_latency_cdf.png"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Error(err)
		}
	}
}
