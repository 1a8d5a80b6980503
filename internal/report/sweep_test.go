package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

func TestRenderSweepGolden(t *testing.T) {
	dir := copyDir(t, "testdata/sweep1")
	written, err := RenderSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 2+len(sweepFigures) {
		t.Errorf("wrote %v, want sweep.md, sweep.html and %d plots", written, len(sweepFigures))
	}
	md, err := os.ReadFile(filepath.Join(dir, SweepMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/sweep1.sweep.md"
	testenv.Golden(t, golden, md)
	// Facts of the hand-made sweep, independent of the golden file: the
	// chain holds 1000 tx/s, so 2 x 700 saturates, 2 x 400 (800 offered) is
	// the saturation point (beating 1 x 700), and one 1 x 700 repeat had a
	// lagging generator: invalid, not saturated.
	for _, s := range []string{
		"**Saturation point: c=2 x r=400 tx/s (offered 800 tx/s), committed 804.8 tx/s (mean of 2 repeats",
		"| 700 | 5600 / 5600 (2 runs, 1 invalid) | 7760 / 11200 (2 runs) **saturated** |",
		"| 400 | 3200 / 3200 (2 runs) | **6400 / 6400 (2 runs)** ◀ |",
		"invalid: load generator missed its schedule; load validator00/0: p99 send lag 54.0 ms",
		"A cell is saturated when committed < 99 % of sent, or its p50 latency > 3 x the p50 of the lightest offered load",
		"](plots/sweep_throughput.png)",
		"](plots/sweep_latency.png)",
		"| 1 | 700 | 700 | 702.8 | — |",
		"| 2 | 400 | 800 | 804.8 (sd 2.3, 803.2–806.4, n=2) | 700 tx/s (saturated) |",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("sweep.md lacks %q", s)
		}
	}
	h, err := os.ReadFile(filepath.Join(dir, SweepHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(h, []byte(`src="data:image/png;base64,`)); n != len(sweepFigures) {
		t.Errorf("sweep.html embeds %d images, want %d", n, len(sweepFigures))
	}
	if regexp.MustCompile(`(src|href)="(https?:|//|plots/)`).Match(h) {
		t.Error("sweep.html refers to an outside resource")
	}
}

// TestRenderSweepDeterministic: a re-render of the same directory, and a
// render of a copy, give the same bytes.
func TestRenderSweepDeterministic(t *testing.T) {
	a, b := copyDir(t, "testdata/sweep1"), copyDir(t, "testdata/sweep1")
	files := append([]string{SweepMarkdownFile, SweepHTMLFile}, page.PlotsDir+"/sweep_throughput.png", page.PlotsDir+"/sweep_latency.png")
	read := func(dir string) map[string][]byte {
		if _, err := RenderSweep(dir); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[f] = data
		}
		return out
	}
	first, again, other := read(a), read(a), read(b)
	for _, f := range files {
		if !bytes.Equal(first[f], again[f]) || !bytes.Equal(first[f], other[f]) {
			t.Errorf("%s differs between renders", f)
		}
	}
}

func TestRenderSweepIncomplete(t *testing.T) {
	dir := copyDir(t, "testdata/sweep1")
	x, err := rundir.SweepRecord.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Interrupted after 3 cells: the rest pending, one interrupted.
	for i := range x.Cells {
		switch {
		case i == 3:
			x.Cells[i].Status = rundir.CellInterrupted
		case i > 3:
			x.Cells[i].Status, x.Cells[i].Figures, x.Cells[i].RunDir = rundir.CellPending, nil, ""
		}
	}
	x.Complete, x.Finished = false, ""
	x.Judge()
	if err := rundir.SweepRecord.Write(dir, x); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderSweep(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, SweepMarkdownFile))
	for _, s := range []string{"3 of 12 cells measured", "**incomplete**", "| pending |", "| interrupted |"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("incomplete sweep.md lacks %q:\n%s", s, md)
		}
	}
	if s := SweepSummary(x); !strings.Contains(s, "3 of 12 cells") || !strings.Contains(s, "r \\ c") {
		t.Errorf("summary:\n%s", s)
	}
}

func TestSweepChromium(t *testing.T) {
	testenv.Integration(t) // a real browser, 6-9 s
	bin := Browser()
	if bin == "" {
		testenv.Skip(t, "no chromium on PATH: `go run ./cmd/benchnet setup --tests` installs Debian's chromium")
	}
	dir := copyDir(t, "testdata/sweep1")
	if _, err := RenderSweep(dir); err != nil {
		t.Fatal(err)
	}
	// BrowserCheck opens report.html: give it the sweep's page under that name.
	work := t.TempDir()
	h, err := os.ReadFile(filepath.Join(dir, SweepHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, HTMLFile), h, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sizes, inked, err := BrowserCheck(ctx, bin, work, t.TempDir(), filepath.Join(work, "shot.png"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != len(sweepFigures) {
		t.Errorf("browser saw %d images, want %d: %v", len(sizes), len(sweepFigures), sizes)
	}
	for _, f := range sweepFigures {
		var w, hh int
		if _, err := fmt.Sscanf(sizes[f.title], "%dx%d", &w, &hh); err != nil || w < 500 || hh < 250 {
			t.Errorf("plot %q loaded as %q", f.title, sizes[f.title])
		}
	}
	if inked < 0.01 {
		t.Errorf("screenshot looks blank: %.2f%% inked", 100*inked)
	}
}

// TestRenderSearch: a search's report lists its probes and outcome.
func TestRenderSearch(t *testing.T) {
	dir := t.TempDir()
	// experiment.DefaultSweep's, as a search.
	cfg := rundir.SweepConfig{Duration: rundir.Duration{Duration: 30 * time.Second}, Repeats: 1,
		Cooldown: rundir.Duration{Duration: time.Minute}, MinCommitted: 0.99, LatencyFactor: 3,
		MinRate: 10, MaxRepeats: 3, Budget: 20, Growth: 4, ClearMargin: 0.05}
	cfg.Search, cfg.Connections, cfg.Rates = true, []int{1}, nil
	cfg.StartRate, cfg.MaxRate, cfg.Precision, cfg.MinRepeats = 400, 2000, 0.3, 1
	x := rundir.SweepIndex{SchemaVersion: rundir.SweepSchema, Kind: "search", Name: "quickstart", Config: cfg, Seed: 1,
		Started: "2026-11-23T17:00:00Z", Testnets: []string{}}
	// 400 ok, 800 saturated, 600 ok: the bracket [600, 800) is 33 % wide,
	// 700 ok closes it at 14 % < 30 %.
	for i, r := range []float64{400, 800, 600, 700} {
		committed := 1000
		if r == 800 {
			committed = 700
		}
		f := judge.Cell{Connections: 1, Rate: r, Offered: r, Sent: 1000, Committed: committed, Lost: 1000 - committed,
			TPS: r * float64(committed) / 1000, P50Ms: 700, P95Ms: 900, P99Ms: 1000, LoadValid: true}
		x.Cells = append(x.Cells, rundir.SweepCell{Order: i + 1, ID: fmt.Sprint(i + 1), Probe: i + 1, Connections: 1, Rate: r,
			Repeat: 1, Status: rundir.CellDone, Figures: &f, Expected: 1000})
	}
	x.Complete = true
	x.Judge()
	if err := rundir.SweepRecord.Write(dir, &x); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderSweep(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, SweepMarkdownFile))
	for _, s := range []string{
		"# benchnet saturation search: quickstart",
		"**Search at c = 1: found: highest sustainable rate 700 tx/s per connection; saturation lies in [700, 800)",
		"| 2 | 800 | 1 | saturated | clear in 1 run(s): committed/sent 0.7000",
		"Search: a geometric ramp (x 4) from 400 tx/s",
		"](plots/sweep_throughput.png)",
	} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("search sweep.md lacks %q:\n%s", s, md)
		}
	}
}

func TestUpperFirst(t *testing.T) {
	for in, want := range map[string]string{"": "", "grid": "Grid", "Δ = (a − b)/b": "Δ = (a − b)/b", "é": "É", "\xff": "\xff"} {
		if got := upperFirst(in); got != want {
			t.Errorf("upperFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
