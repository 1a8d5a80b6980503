// Package historytest makes small finished directories of every kind the
// history records (run, soak, compare, sweep, QA) in a test's temporary
// directory, each run a copy of the chain report's finished run fixture
// (internal/kinds/cometbft/chainreport/testdata/run1, 88 KB) re-labelled
// with a release and a throughput. Nothing here is committed as data.
package historytest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Run1 is the finished CometBFT run every fixture copies.
func Run1() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "kinds", "cometbft", "chainreport", "testdata", "run1")
}

// Stamp names fixture directories the way rundir does, so their start
// time reads back (2026-11-20 10:00:00 UTC plus n seconds).
func Stamp(n int) string {
	return rundir.Stamp(time.Date(2026, 11, 20, 10, 0, n, 0, time.UTC))
}

// Run copies Run1 to dst as a run of release rel ("cometbft@v1.0.1")
// committing tps tx/s: the plan, the manifest and the provenance name rel,
// results.json carries tps.
func Run(t testing.TB, dst, rel string, tps float64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", Run1(), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v %s", Run1(), dst, err, out)
	}
	name, version, _ := strings.Cut(rel, "@")
	edit(t, filepath.Join(dst, rundir.Plan), func(p map[string]any) {
		for _, n := range p["nodes"].([]any) {
			n.(map[string]any)["release"] = map[string]any{"name": name, "version": version}
		}
	})
	replace(t, filepath.Join(dst, rundir.Manifest), `release = "cometbft@v1.0.1"`, fmt.Sprintf("release = %q", rel))
	d := &rundir.Dir{Path: dst}
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	res.TxPerSecond = tps
	if err := d.WriteResults(res); err != nil {
		t.Fatal(err)
	}
	prov := filepath.Join(dst, "provenance")
	if err := os.RemoveAll(prov); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("reference: %s\nrelease: %s\nprogram: cometbft\nkind: tag\nmodule: github.com/cometbft/cometbft\nversion: %s\nsha256: %x\n\n# recorded with the binary:\n",
		rel, rel, version, []byte(fmt.Sprintf("%-32s", rel)))
	if err := os.MkdirAll(prov, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prov, rel+"-cometbft.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Soak is Run plus the soak.json of a decay with the given half-life.
func Soak(t testing.TB, dst, rel string, tps, halfLife float64) {
	t.Helper()
	Run(t, dst, rel, tps)
	fit := judge.Decay{Decays: true, HalfLife: halfLife, B: 0.693 / halfLife, Verdict: "decays"}
	if err := rundir.SoakRecord.Write(dst, &rundir.SoakResult{SchemaVersion: rundir.SoakSchema, Fit: fit}); err != nil {
		t.Fatal(err)
	}
}

// Variant is one variant of a compare: its release and each repeat's tps.
type Variant struct {
	Name    string
	Release string
	TPS     []float64
}

// Compare writes a compare directory dir with its runs under runs/, the
// first variant the base; complete false leaves it unfinished.
func Compare(t testing.TB, dir string, complete bool, vs ...Variant) {
	t.Helper()
	idx := rundir.CompareIndex{SchemaVersion: rundir.CompareSchema, Kind: "compare", Name: "quickstart", Source: "manifest",
		Base: vs[0].Name, Config: rundir.CompareConfig{Repeats: len(vs[0].TPS), Threshold: 10}, Complete: complete}
	for i, v := range vs {
		idx.Variants = append(idx.Variants, v.Name)
		for r, tps := range v.TPS {
			rel := filepath.Join(rundir.CompareRunsDir, fmt.Sprintf("%s-quickstart-%s", Stamp(10*r+i), v.Name))
			Run(t, filepath.Join(dir, rel), v.Release, tps)
			idx.Runs = append(idx.Runs, rundir.CompareRun{Order: len(idx.Runs) + 1, Variant: v.Name, Repeat: r + 1, Status: rundir.RunDone, RunDir: rel})
		}
	}
	copyManifest(t, dir)
	if err := rundir.CompareRecord.Write(dir, &idx); err != nil {
		t.Fatal(err)
	}
}

// Cell is one grid cell at one connection: its rate and committed tx/s;
// Saturated makes it commit half of what it sent.
type Cell struct {
	Rate      float64
	TPS       float64
	Saturated bool
}

// Sweep writes a complete grid sweep dir of release rel, one repeat per
// cell, each cell's plan at its rate.
func Sweep(t testing.TB, dir, rel string, cells ...Cell) {
	t.Helper()
	r := judge.DefaultRule()
	idx := rundir.SweepIndex{SchemaVersion: rundir.SweepSchema, Kind: "grid", Name: "quickstart", Complete: true,
		Config: rundir.SweepConfig{Connections: []int{1}, Duration: rundir.Duration{Duration: 10 * time.Second}, Repeats: 1,
			MinCommitted: r.MinCommitted, LatencyFactor: r.LatencyFactor}}
	for i, c := range cells {
		idx.Config.Rates = append(idx.Config.Rates, c.Rate)
		id := fmt.Sprintf("c1-r%g", c.Rate)
		runDir := filepath.Join(rundir.SweepCells, Stamp(i)+"-quickstart-"+id)
		Run(t, filepath.Join(dir, runDir), rel, c.TPS)
		edit(t, filepath.Join(dir, runDir, rundir.Plan), func(p map[string]any) { p["load"].(map[string]any)["rate"] = c.Rate })
		committed := 100
		if c.Saturated {
			committed = 50
		}
		idx.Cells = append(idx.Cells, rundir.SweepCell{Order: i + 1, ID: id, Connections: 1, Rate: c.Rate, Repeat: 1,
			Status: rundir.CellDone, RunDir: runDir, Figures: &judge.Cell{Connections: 1, Rate: c.Rate, Offered: c.Rate,
				Sent: 100, Committed: committed, TPS: c.TPS, P50Ms: 800, P95Ms: 1000, P99Ms: 1100, LoadValid: true}})
	}
	copyManifest(t, dir)
	if err := rundir.SweepRecord.Write(dir, &idx); err != nil {
		t.Fatal(err)
	}
}

// QA writes a QA directory dir of two builds: a grid saturation step of
// the baseline (saturated at 400), two saturation pairs (the candidate's
// second run testbed-bound), a steady compare of two repeats each, and a
// rotate step that was skipped. complete false leaves it unfinished.
func QA(t testing.TB, dir string, complete bool, base, cand string) {
	t.Helper()
	steps := filepath.Join(dir, rundir.QAStepsDir)
	Sweep(t, filepath.Join(steps, "saturation-baseline"), base, Cell{Rate: 200, TPS: 200}, Cell{Rate: 400, TPS: 300, Saturated: true})
	Compare(t, filepath.Join(steps, "steady"), true, Variant{"baseline", base, []float64{150, 152}}, Variant{"candidate", cand, []float64{140, 141}})
	sat := &rundir.QASaturation{Connections: 1, Baseline: judge.Interval{Lo: 200, Hi: 400}, Rate: 160, OverloadRate: 240}
	for i, tps := range [][2]float64{{230, 220}, {232, 200}} {
		p := rundir.QAPair{First: rundir.QABaseline, BaseTPS: tps[0], CandTPS: tps[1],
			BaseDir: filepath.Join(rundir.QAStepsDir, "saturation-paired", Stamp(100+2*i)+"-qa-baseline"),
			CandDir: filepath.Join(rundir.QAStepsDir, "saturation-paired", Stamp(101+2*i)+"-qa-candidate")}
		if i == 1 {
			p.First, p.CandExcluded = rundir.QACandidate, rundir.TestbedBoundPrefix+": steal 7 %"
		}
		Run(t, filepath.Join(dir, p.BaseDir), base, tps[0])
		Run(t, filepath.Join(dir, p.CandDir), cand, tps[1])
		sat.Pairs = append(sat.Pairs, p)
	}
	x := &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa", Name: "qa", Baseline: rundir.QABuild{Ref: base},
		Candidate: rundir.QABuild{Ref: cand}, Manifest: rundir.Manifest, Profile: "quick", Config: json.RawMessage(`{}`),
		Complete: complete, Saturation: sat, Steps: []rundir.QAStep{
			{Name: "saturation-baseline", Kind: "sweep", Build: rundir.QABaseline, Dir: "steps/saturation-baseline", Status: rundir.StepDone},
			{Name: "saturation-paired", Kind: "pairs", Build: "both", Dir: "steps/saturation-paired", Status: rundir.StepDone},
			{Name: "steady", Kind: "compare", Build: "both", Dir: "steps/steady", Status: rundir.StepDone},
			{Name: "rotate-baseline", Kind: "run", Build: rundir.QABaseline, Status: rundir.StepSkipped},
		}}
	copyManifest(t, dir)
	if err := rundir.QARecord.Write(dir, x); err != nil {
		t.Fatal(err)
	}
}

func copyManifest(t testing.TB, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Run1(), rundir.Manifest))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, rundir.Manifest), data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// edit rewrites a JSON file through f.
func edit(t testing.TB, path string, f func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f(doc)
	if data, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func replace(t testing.TB, path, old, repl string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, repl, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
