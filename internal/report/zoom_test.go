package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		axis, in string
		min, max float64
		dur      bool
		err      string
	}{
		{"x", "10s:20s", 10, 20, true, ""},
		{"y", "0:2s", 0, 2000, true, ""},
		{"y", "500ms:1.5s", 500, 1500, true, ""},
		{"y", "0:4000", 0, 4000, false, ""},
		{"x", "10s:", 10, nanMax, true, ""},
		{"x", "20s:10s", 0, 0, false, "end must be above"},
		{"x", "10s", 0, 0, false, "want MIN:MAX"},
		{"y", "0:two", 0, 0, false, "--yrange"},
	} {
		r, err := ParseRange(c.axis, c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %q: err %v, want %q", c.axis, c.in, err, c.err)
			}
			continue
		}
		if err != nil || r.Min != c.min || r.Max != c.max || r.Duration != c.dur {
			t.Errorf("%s %q = %+v, %v; want %v:%v dur %v", c.axis, c.in, r, err, c.min, c.max, c.dur)
		}
	}
}

// TestRenderZoomed: a zoomed report goes elsewhere, says it is zoomed,
// and its time plots differ from the run's own while the distribution
// plot (no time axis) is the same; the run directory is untouched.
func TestRenderZoomed(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if _, err := RenderZoomed(dir, "", Zoom{}); err == nil {
		t.Error("a zoomed report into the run directory was not refused")
	}
	x, _ := ParseRange("x", "5s:9s")
	y, _ := ParseRange("y", "0:2s")
	out := filepath.Join(t.TempDir(), "zoom")
	if _, err := RenderZoomed(dir, out, Zoom{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, MarkdownFile))
	if !bytes.Contains(md, []byte("**Zoomed**")) || !bytes.Contains(md, []byte("time axes 5s:9s")) {
		t.Errorf("zoomed report does not say so")
	}
	for f, same := range map[string]bool{"latency_vs_send.png": false, "mempool_size.png": false, "latency_cdf.png": true} {
		a, _ := os.ReadFile(filepath.Join(dir, PlotsDir, f))
		b, _ := os.ReadFile(filepath.Join(out, PlotsDir, f))
		if len(a) == 0 || bytes.Equal(a, b) != same {
			t.Errorf("%s: zoomed equal to the run's own = %v, want %v", f, bytes.Equal(a, b), same)
		}
	}
	if again, _ := os.ReadFile(filepath.Join(dir, MarkdownFile)); !bytes.Equal(own, again) {
		t.Error("the run directory's report changed")
	}
}
