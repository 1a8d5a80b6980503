package report_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// A soak over two variants: "info" decays with a 100 s half-life, "quiet"
// holds 300 tx/s. The report sets the half-lives side by side and draws
// both series on one plot; `benchnet report DIR` finds it by its record.
func TestRenderSoakVariants(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sv")
	for _, v := range []string{"info", "quiet"} {
		if err := os.MkdirAll(filepath.Join(root, "runs"), 0o755); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "runs", v)
		if out, err := exec.Command("cp", "-r", report.ChainRun, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		if v == "info" {
			report.SoakBlocks(t, dir)
		} else {
			var b strings.Builder
			b.WriteString("height,time_ns,num_txs,run_txs,size_bytes,proposer\n")
			for h, ts := 1, 0.0; ts < 300; h, ts = h+1, ts+1.2 {
				n := 360 + 7*(h%3) // no trend, some noise
				fmt.Fprintf(&b, "%d,%d,%d,%d,1000,A\n", h, int64(2e18+ts*1e9), n, n)
			}
			if err := os.WriteFile(filepath.Join(dir, "blocks.csv"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := experiment.AnalyzeSoak(dir, 1, 100); err != nil {
			t.Fatal(err)
		}
	}
	idx := &rundir.SoakVariantsIndex{SchemaVersion: rundir.SoakVariantsSchema, Kind: "soak-variants", Name: "q", Rate: 300, Connections: 1,
		Duration: "5m0s", Bootstrap: 100, Seed: 1, Started: "2026-11-24T12:00:00Z", Finished: "2026-11-24T12:11:00Z", Complete: true,
		Runs: []rundir.SoakVariantRun{{Variant: "info", Label: "(the manifest)", Status: rundir.RunDone, RunDir: "runs/info"},
			{Variant: "quiet", Label: "validator.config.log_level=error", Status: rundir.RunDone, RunDir: "runs/quiet"}}}
	if err := rundir.SoakVariantsRecord.Write(root, idx); err != nil {
		t.Fatal(err)
	}
	if k := report.DirKind(root); k != "soak-variants" {
		t.Fatalf("DirKind %q, want soak-variants", k)
	}
	files, err := report.RenderDir(root, "")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, report.SoakVariantsMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/soak-variants.md", md)
	for _, s := range []string{
		"| info | (the manifest) | 100 |",
		"| quiet | validator.config.log_level=error | no decay |",
		"![Committed tx/s per second, every variant](plots/soak_variants_tps.png)",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("soak-variants.md lacks %q", s)
		}
	}
	for _, want := range []string{"runs/info/soak.md", "runs/quiet/soak.md", "plots/soak_variants_tps.png"} {
		found := false
		for _, f := range files {
			found = found || strings.HasSuffix(f, want)
		}
		if !found {
			t.Errorf("rendered %v, want %s among them", files, want)
		}
	}
}
