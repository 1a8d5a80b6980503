package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/experiment"
)

// soakBlocks replaces a run's blocks.csv with 1.2 s blocks for 5 min whose
// throughput decays 300 + 500·exp(−t/τ) with a 100 s half-life.
func soakBlocks(t *testing.T, dir string) {
	t.Helper()
	tau := 100 / math.Ln2
	var b strings.Builder
	b.WriteString("height,time_ns,num_txs,run_txs,size_bytes,proposer\n")
	for h, ts := 1, 0.0; ts < 300; h, ts = h+1, ts+1.2 {
		n := int((300+500*math.Exp(-ts/tau))*1.2 + 0.5)
		fmt.Fprintf(&b, "%d,%d,%d,%d,1000,A\n", h, int64(2e18+ts*1e9), n, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "blocks.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRenderSoak(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	if _, err := Render(dir, ""); err != nil { // the run report's mempool and RSS plots
		t.Fatal(err)
	}
	soakBlocks(t, dir)
	if _, err := experiment.AnalyzeSoak(dir, 1, 100); err != nil {
		t.Fatal(err)
	}
	render := func() ([]byte, []byte) {
		if _, err := RenderSoak(dir); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, SoakMarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		h, err := os.ReadFile(filepath.Join(dir, SoakHTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		return md, h
	}
	md, h := render()
	for _, s := range []string{"**Decays from ", "half-life 10", "| half-life (s) |", "residual bootstrap", "![Mempool size](plots/mempool_size.png)", "![Resident memory per node](plots/rss.png)"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("soak.md lacks %q:\n%s", s, md)
		}
	}
	if n := bytes.Count(h, []byte(`src="data:image/png;base64,`)); n != 3 {
		t.Errorf("soak.html embeds %d images, want 3", n)
	}
	md2, h2 := render()
	if !bytes.Equal(md, md2) || !bytes.Equal(h, h2) {
		t.Error("re-render differs")
	}
	// Without the run report's plots the soak report says so.
	if err := os.RemoveAll(filepath.Join(dir, PlotsDir)); err != nil {
		t.Fatal(err)
	}
	md3, _ := render()
	if !bytes.Contains(md3, []byte("mempool_size.png is missing")) {
		t.Errorf("missing plots not stated:\n%s", md3)
	}
}
