package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
)

func TestRenderSoak(t *testing.T) {
	dir := report.CopyDir(t, report.ChainRun)
	if _, err := report.Render(dir, ""); err != nil { // the run report's mempool and RSS plots
		t.Fatal(err)
	}
	report.SoakBlocks(t, dir)
	if _, err := experiment.AnalyzeSoak(dir, 1, 100); err != nil {
		t.Fatal(err)
	}
	render := func() ([]byte, []byte) {
		if _, err := report.RenderSoak(dir); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, report.SoakMarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		h, err := os.ReadFile(filepath.Join(dir, report.SoakHTMLFile))
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
	if err := os.RemoveAll(filepath.Join(dir, page.PlotsDir)); err != nil {
		t.Fatal(err)
	}
	md3, _ := render()
	if !bytes.Contains(md3, []byte("mempool_size.png is missing")) {
		t.Errorf("missing plots not stated:\n%s", md3)
	}
}
