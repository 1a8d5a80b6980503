package report

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// A sweep over 4 variants x 2 durations x c {1, 2} x r {200, 500}: a
// hand-made sweep.json whose chains hold 900, 1000, 700 and 800 tx/s over
// 10 s, 10 % less over 30 s. The report has one saturation table per
// variant and duration, the committed tx/s per variant side by side, and
// tm-bench's three plots (rate, duration, connections).
func TestRenderSweepVariantsGolden(t *testing.T) {
	dir := copyDir(t, "testdata/sweep-variants")
	written, err := RenderSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SweepMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/sweep-variants.sweep.md", md)
	var pngs []string
	for _, f := range written {
		if strings.HasSuffix(f, ".png") {
			pngs = append(pngs, filepath.Base(f))
		}
	}
	want := []string{"sweep_variants_connections.png", "sweep_variants_duration.png", "sweep_variants_rate.png"}
	sort.Strings(pngs)
	if strings.Join(pngs, " ") != strings.Join(want, " ") {
		t.Errorf("plots %v, want %v", pngs, want)
	}
	for _, s := range []string{
		// socket-info holds 676 tx/s over 10 s: 2 x 500 saturates, 1 x 500 is its point.
		"| 500 | **5000 / 5000** ◀ | 6766 / 10000 **saturated** |",
		// Over 30 s it holds 630: 2 x 500 commits 630 tx/s, 63 %.
		"| 2 | 500 | 30s | 810.0 [81.0 %] | 990.0 [99.0 %] | 630.0 [63.0 %] | 720.0 [72.0 %] |",
		"| 1 | 200 | 10s | 200.0 [100.0 %] | 200.0 [100.0 %] | 200.0 [100.0 %] | 200.0 [100.0 %] |",
		"| variants (the base first) | inproc-info, inproc-error, socket-info, socket-error |",
		"### socket-info, 30s",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("sweep.md lacks %q", s)
		}
	}
	// Every variant is judged on its own cells: inproc-error holds 2 x 500
	// (1063 tx/s over 10 s, 990 over 30 s: 99.0 %, the rule's edge), the
	// others never do.
	if !bytes.Contains(md, []byte("inproc-error, 10s: c=2 x r=500 (1000.0 tx/s committed); inproc-error, 30s: c=2 x r=500 (990.0 tx/s committed); socket-info, 10s: c=1 x r=500")) {
		t.Errorf("headline lacks inproc-error's own saturation point:\n%s", md[:min(len(md), 1500)])
	}
}
