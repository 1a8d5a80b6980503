package chainreport

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
)

// TestRenderZoomed: a zoomed report goes elsewhere, says it is zoomed,
// and its time plots differ from the run's own while the distribution
// plot (no time axis) is the same; the run directory is untouched.
func TestRenderZoomed(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if _, err := report.RenderZoomed(dir, "", report.Zoom{}); err == nil {
		t.Error("a zoomed report into the run directory was not refused")
	}
	x, _ := report.ParseRange("x", "5s:9s")
	y, _ := report.ParseRange("y", "0:2s")
	out := filepath.Join(t.TempDir(), "zoom")
	if _, err := report.RenderZoomed(dir, out, report.Zoom{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, report.MarkdownFile))
	if !bytes.Contains(md, []byte("**Zoomed**")) || !bytes.Contains(md, []byte("time axes 5s:9s")) {
		t.Errorf("zoomed report does not say so")
	}
	for f, same := range map[string]bool{"latency_vs_send.png": false, "mempool_size.png": false, "latency_cdf.png": true} {
		a, _ := os.ReadFile(filepath.Join(dir, page.PlotsDir, f))
		b, _ := os.ReadFile(filepath.Join(out, page.PlotsDir, f))
		if len(a) == 0 || bytes.Equal(a, b) != same {
			t.Errorf("%s: zoomed equal to the run's own = %v, want %v", f, bytes.Equal(a, b), same)
		}
	}
	if again, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile)); !bytes.Equal(own, again) {
		t.Error("the run directory's report changed")
	}
}
