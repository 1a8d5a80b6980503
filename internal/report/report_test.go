package report

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// copyDir copies a stored run directory, so the test renders into a fresh
// place and never writes into testdata.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestRenderGolden(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	written, err := Render(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/run1.report.md"
	if *update {
		if err := os.WriteFile(golden, md, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(md, want) {
		t.Errorf("report.md differs from %s (rerun with -update if intended); got:\n%s", golden, md)
	}

	// Every plot of the list is there, as a decodable, non-trivial PNG.
	if len(written) != 2+len(figures) {
		t.Errorf("wrote %d files, want report.md, report.html and %d plots: %v", len(written), len(figures), written)
	}
	for _, f := range figures {
		p := filepath.Join(dir, PlotsDir, f.name+".png")
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
		"sent = committed + rejected + lost: **holds**",
		"| cometbft@v1.0.1 | 4 | go1.26.8 | github.com/cometbft/cometbft v1.0.1 |",
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
	h, err := os.ReadFile(filepath.Join(dir, HTMLFile))
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
	for _, f := range []string{MarkdownFile, HTMLFile, "plots/latency_per_block.png", "plots/cpu.png"} {
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
		{"plan only", []string{"plan.json"}, len(figures) + 5, []string{"no data** — no results.json", "no data** — no events.jsonl"}},
		{"no metrics", []string{"plan.json", "manifest.toml", "results.json", "txs.csv", "blocks.csv", "events.jsonl", "mempool.csv"},
			len(figures) - 4 + 1, // latency ×2, mempool (mempool.csv), block size (blocks.csv) have data; machine has none
			[]string{"](plots/mempool_size.png)", "](plots/block_size.png)", "no cometbft_p2p_peers samples"}},
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
			md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
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
		if _, err := Render(p, ""); err == nil || !errors.Is(err, ErrNotRunDir) {
			t.Errorf("Render(%s) = %v, want a not-a-run-directory error", p, err)
		}
	}
}

// probe is appended to a copy of report.html for the browser test only: it
// writes each image's decoded size into the DOM, which --dump-dom prints.
const probe = `<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("img.plot").forEach(function (img) {
    out.push(img.alt + "=" + img.naturalWidth + "x" + img.naturalHeight);
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = "PRO" + "BE[" + out.join(";") + "]";
  document.body.appendChild(pre);
});
</script>
`

// TestChromium opens report.html in a real browser: every embedded plot
// must decode to a non-zero size, and a screenshot of the page must not be
// blank.
func TestChromium(t *testing.T) {
	bin := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	dir := copyDir(t, "testdata/run1")
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	probed := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probed, bytes.Replace(h, []byte("</body>"), []byte(probe+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}
	out, err := exec.CommandContext(ctx, bin, append(flags, "--dump-dom", "file://"+probed)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := regexp.MustCompile(`PROBE\[(.*?)\]`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("probe did not run; DOM tail: %s", tail(out, 500))
	}
	sizes := strings.Split(string(m[1]), ";")
	if len(sizes) != len(figures) {
		t.Errorf("browser saw %d images, want %d: %s", len(sizes), len(figures), m[1])
	}
	for _, s := range sizes {
		var w, hgt int
		name, size, _ := strings.Cut(s, "=")
		if _, err := fmt.Sscanf(size, "%dx%d", &w, &hgt); err != nil || w < 500 || hgt < 250 {
			t.Errorf("image %q loaded as %q", name, size)
		}
	}
	t.Logf("browser image sizes: %s", m[1])

	shot := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(ctx, bin, append(flags, "--screenshot="+shot, "--window-size=1200,6000", "file://"+filepath.Join(dir, HTMLFile))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, tail(out, 1000))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Non-blank: count pixels that are not the page's white background.
	b := img.Bounds()
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
		}
	}
	total := (b.Dx() / 4) * (b.Dy() / 4)
	t.Logf("screenshot %v, %d of %d sampled pixels inked", b.Size(), inked, total)
	if b.Dx() != 1200 || inked < total/100 {
		t.Errorf("screenshot looks blank: %v, %d/%d inked", b.Size(), inked, total)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
