package chainreport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/testenv"
)

// copyDir copies a stored run directory, so the test renders into a fresh
// place and never writes into testdata.
func copyDir(t *testing.T, src string) string { return testenv.CopyDir(t, src) }

// TestRenderRotateGolden: a rotating run (examples/rotate.toml cut to 3
// cycles): catch-up per cycle, heights with their gaps, duplicates, late
// nodes left out of the mempool reach, the proposal delay; rendered as
// `benchnet report DIR` would (report.RenderDir through the registry).
func TestRenderRotateGolden(t *testing.T) {
	dir := copyDir(t, "testdata/rotate1")
	if got := report.DirKind(dir); got != "run" {
		t.Fatalf("DirKind = %q, want run", got)
	}
	if _, err := report.RenderDir(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/rotate1.report.md", md)
}

func TestRenderGolden(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	written, err := Render(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/run1.report.md"
	testenv.Golden(t, golden, md)

	// Every plot of the list is there, as a decodable, non-trivial PNG.
	if len(written) != 2+len(figures) {
		t.Errorf("wrote %d files, want report.md, report.html and %d plots: %v", len(written), len(figures), written)
	}
	for _, f := range figures {
		p := filepath.Join(dir, page.PlotsDir, f.name+".png")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("plot %s: %v", f.name, err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Errorf("plot %s: %v", f.name, err)
			continue
		}
		if sz := img.Bounds().Size(); sz.X < 500 || sz.Y < 250 {
			t.Errorf("plot %s is %v", f.name, sz)
		}
		if !bytes.Contains(md, []byte("](plots/"+f.name+".png)")) {
			t.Errorf("report.md does not show plot %s", f.name)
		}
	}
	// Facts the report must state, independent of the golden file.
	for _, s := range []string{
		"| 60 | 55 | 2 | 3 | 0 | 0 |",
		"sent = committed + rejected + lost + pending: **holds**",
		"| cometbft@v1.0.1 | 4 | cometbft@v1.0.1 | github.com/cometbft/cometbft v1.0.1 | go1.26.8 | github.com/cometbft/cometbft v1.0.1 | 0f5e2a9ad7e4c0bb |",
		"| 8.500 | node_exited | validator3 | signal: killed | yes |",
		"| qa-box |",
		"t = 0, the first event (node_started)",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	if bytes.Contains(md, []byte("no data")) {
		t.Errorf("the complete run1 has a plot or table with no data")
	}

	// report.html is self-contained: every plot inline, nothing fetched.
	h, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(h, []byte(`src="data:image/png;base64,`)); n != len(figures) {
		t.Errorf("report.html embeds %d images, want %d", n, len(figures))
	}
	if regexp.MustCompile(`(src|href)="(https?:|//|plots/)`).Match(h) {
		t.Error("report.html refers to an outside resource")
	}
}

// TestDeterministic: two renders of two copies give the same bytes.
func TestDeterministic(t *testing.T) {
	a, b := copyDir(t, "testdata/run1"), copyDir(t, "testdata/run1")
	if _, err := Render(a, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := Render(b, ""); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.MarkdownFile, report.HTMLFile, "plots/latency_per_block.png", "plots/cpu.png"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renders (%d vs %d bytes)", f, len(x), len(y))
		}
	}
}

// TestMissingData: a run directory with only some files still renders, and
// says "no data" where it has none.
func TestMissingData(t *testing.T) {
	for _, c := range []struct {
		name   string
		keep   []string
		noData int // plots and tables without data
		want   []string
	}{
		{"plan only", []string{"plan.json"}, len(figures) + 6, []string{"no data** — no results.json: run `benchnet analyze run`", "no data** — no events.jsonl"}},
		{"no metrics", []string{"plan.json", "manifest.toml", "results.json", "txs.csv", "blocks.csv", "events.jsonl", "mempool.csv"},
			len(figures) - 6 + 1, // latency ×3 (txs.csv), mempool and its sum (mempool.csv), block size (blocks.csv) have data; machine has none
			[]string{"](plots/mempool_size.png)", "](plots/mempool_total.png)", "](plots/block_size.png)", "no cometbft_p2p_peers samples"}},
		{"cut samples", []string{"plan.json", "metrics/samples.csv.gz"}, 0, []string{"truncated"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := copyDir(t, "testdata/run1")
			dir := filepath.Join(t.TempDir(), "run")
			for _, k := range c.keep {
				b, err := os.ReadFile(filepath.Join(src, k))
				if err != nil {
					t.Fatal(err)
				}
				if c.name == "cut samples" && strings.HasSuffix(k, ".gz") {
					b = b[:len(b)*2/3]
				}
				_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, k)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, k), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Render(dir, ""); err != nil {
				t.Fatal(err)
			}
			md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
			if n := bytes.Count(md, []byte("> **no data**")); c.noData > 0 && n != c.noData {
				t.Errorf("%d sections say no data, want %d:\n%s", n, c.noData, md)
			}
			for _, s := range c.want {
				if !bytes.Contains(md, []byte(s)) {
					t.Errorf("report.md lacks %q:\n%s", s, md)
				}
			}
		})
	}
}

func TestNotARunDir(t *testing.T) {
	empty := t.TempDir()
	for _, p := range []string{empty, filepath.Join(empty, "missing"), "report.go"} {
		if _, err := Render(p, ""); err == nil || !errors.Is(err, report.ErrNotRunDir) {
			t.Errorf("Render(%s) = %v, want a not-a-run-directory error", p, err)
		}
	}
}

func TestChromium(t *testing.T) {
	testenv.Integration(t) // a real browser, 6-9 s
	bin := report.Browser()
	if bin == "" {
		testenv.Skip(t, "no chromium on PATH: `go run ./cmd/benchnet setup --tests` installs Debian's chromium")
	}
	dir := copyDir(t, "testdata/run1")
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sizes, inked, err := report.BrowserCheck(ctx, bin, dir, t.TempDir(), filepath.Join(dir, "shot.png"))
	if err != nil {
		t.Fatal(err)
	}
	checkPlotsLoaded(t, sizes)
	t.Logf("browser image sizes: %v; screenshot %.1f%% inked", sizes, 100*inked)
	if inked < 0.01 {
		t.Errorf("screenshot looks blank: %.2f%% inked", 100*inked)
	}
}

// checkPlotsLoaded: every plot of the report loaded in the browser at a
// readable size.
func checkPlotsLoaded(t *testing.T, sizes map[string]string) {
	t.Helper()
	if len(sizes) != len(figures) {
		t.Errorf("browser saw %d images, want %d: %v", len(sizes), len(figures), sizes)
	}
	for _, title := range PlotTitles() {
		var w, h int
		if _, err := fmt.Sscanf(sizes[title], "%dx%d", &w, &h); err != nil || w < 500 || h < 250 {
			t.Errorf("plot %q loaded as %q", title, sizes[title])
		}
	}
}
