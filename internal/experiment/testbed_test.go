package experiment

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// markTestbed makes a fake run testbed-bound as the analysis would.
func markTestbed(t *testing.T, dir string, why ...string) {
	t.Helper()
	d, _ := rundir.Open(dir)
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	res.TestbedBound, res.Valid = why, false
	for _, w := range why {
		res.Invalid = append(res.Invalid, "testbed-bound: "+w)
	}
	if err := d.WriteResults(res); err != nil {
		t.Fatal(err)
	}
}

// TestCompareTestbedBound: a testbed-bound run is named and left out of
// the judged values; when that leaves a side fewer than
// MinRunsAfterTestbed runs, the comparison is inconclusive (testbed-bound),
// even where the runs kept would show a regression.
func TestCompareTestbedBound(t *testing.T) {
	m, _ := manifest.Parse("cmp.toml", []byte(cmpManifest))
	fast, _ := m.Variant("fast")
	slow, _ := m.Variant("slow")
	const hog = "load from outside the run: 1.80 cores busy over the load window"
	for _, c := range []struct {
		name      string
		baseRuns  int
		bound     []int // indexes of base runs marked testbed-bound
		candTPS   float64
		verdict   Verdict
		whyPrefix string
	}{
		{name: "one of three left out: judged on two", baseRuns: 3, bound: []int{0}, candTPS: 1000, verdict: Pass},
		{name: "one of two left out: inconclusive, not a regression", baseRuns: 2, bound: []int{1}, candTPS: 500, verdict: Inconclusive, whyPrefix: "testbed-bound: base kept 1 run(s) after 1 testbed-bound (" + hog},
		{name: "every base run left out", baseRuns: 2, bound: []int{0, 1}, candTPS: 1000, verdict: Inconclusive, whyPrefix: "testbed-bound: base kept 0 run(s) after 2"},
		{name: "none left out: the regression stands", baseRuns: 2, candTPS: 500, verdict: Fail, whyPrefix: "regression in cand: tps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			rng := rand.New(rand.NewPCG(5, 6))
			var base, cand []string
			for i := range c.baseRuns {
				b := filepath.Join(root, "b"+string(rune('0'+i)))
				fakeRun(t, b, fast.Raw, 1000, 200, rng)
				if slices.Contains(c.bound, i) {
					markTestbed(t, b, hog)
				}
				base = append(base, b)
				v := filepath.Join(root, "c"+string(rune('0'+i)))
				fakeRun(t, v, slow.Raw, c.candTPS, 200, rng)
				cand = append(cand, v)
			}
			out, idx, err := CompareDirs([]DirVariant{{"base", base}, {"cand", cand}}, DefaultCompare(), t.TempDir(), false, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(idx.TestbedBound) != len(c.bound) {
				t.Errorf("testbed_bound %q, want %d runs named", idx.TestbedBound, len(c.bound))
			}
			named := 0
			for _, w := range idx.Warnings {
				if strings.Contains(w, "is testbed-bound, left out of the verdict: "+hog) {
					named++
				}
			}
			if named != len(c.bound) {
				t.Errorf("warnings %q name %d testbed-bound runs, want %d", idx.Warnings, named, len(c.bound))
			}
			if s := idx.Summary[0]; s.Runs != c.baseRuns-len(c.bound) {
				t.Errorf("base summary over %d runs, want %d", s.Runs, c.baseRuns-len(c.bound))
			}
			res := CompareResult(out, idx)
			if res.Verdict != c.verdict || !strings.HasPrefix(res.Why, c.whyPrefix) {
				t.Errorf("verdict %s: %s, want %s: %s…", res.Verdict, res.Why, c.verdict, c.whyPrefix)
			}
			if c.verdict == Inconclusive && (idx.ExitCode != 0 || len(idx.Regressions) > 0) {
				t.Errorf("exit %d regressions %v under an inconclusive testbed", idx.ExitCode, idx.Regressions)
			}
			// QA's Test Results row says so too.
			r := compareResult("Steady test", "", "v", idx, nil, true)
			if c.verdict == Inconclusive && (r.Result != judge.ResultInconclusive || !strings.HasPrefix(r.Why, "testbed-bound: ")) {
				t.Errorf("QA row %s: %s", r.Result, r.Why)
			}
		})
	}
}

// TestFiguresTestbed: a testbed-bound run's cell is left out of the search
// (Measured false) with its reasons, and those reasons are not repeated as
// the run's own invalid reasons.
func TestFiguresTestbed(t *testing.T) {
	gen := "load: connection 0 (validator0): send lag p99 360.0 ms > 100ms: the generator fell behind"
	res := &rundir.Results{Accounting: rundir.Accounting{Sent: 2000}, Load: []rundir.ConnStats{{TargetRate: 200}},
		GeneratorInvalid: []string{gen},
		TestbedBound:     []string{gen, "the chain committed none of the 2000 txs sent: a broken run, not a measurement"},
		Invalid:          []string{"no sent tx was committed", gen, "testbed-bound: the chain committed none of the 2000 txs sent: a broken run, not a measurement"}}
	f, runInvalid := Figures(res, 1, 200)
	if f.Measured() || len(f.Testbed) != 1 || !strings.HasPrefix(f.Testbed[0], "the chain committed none") || f.LoadValid {
		t.Errorf("cell %+v", f)
	}
	if len(runInvalid) != 1 || runInvalid[0] != "no sent tx was committed" {
		t.Errorf("run invalid %q", runInvalid)
	}
	res.GeneratorInvalid, res.TestbedBound = nil, res.TestbedBound[1:]
	f, _ = Figures(res, 1, 200)
	if f.Measured() || !f.LoadValid || len(f.Testbed) != 1 {
		t.Errorf("testbed-bound only: cell %+v", f)
	}
	if d, why := judge.DefaultRule().Decide([]judge.Cell{f}, 0, 1); d != judge.TestbedBound || !strings.Contains(why, "committed none") {
		t.Errorf("Decide = %s: %s", d, why)
	}
}

// TestCompareUnmeasured: a variant none of whose runs finished (a build
// that failed to start, say) is not judged, and the comparison is not
// passed as "no regression" without it.
func TestCompareUnmeasured(t *testing.T) {
	m, _ := manifest.Parse("cmp.toml", []byte(cmpManifest))
	fast, _ := m.Variant("fast")
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	var base []string
	for i := range 3 {
		b := filepath.Join(root, "b"+string(rune('0'+i)))
		fakeRun(t, b, fast.Raw, 1000, 200, rng)
		base = append(base, b)
	}
	idx := &rundir.CompareIndex{Kind: "compare", Base: "base", Variants: []string{"base", "cand"}, Complete: true,
		Config: rundir.CompareConfig{Repeats: 3, Threshold: 10}}
	for i, b := range base {
		idx.Runs = append(idx.Runs, rundir.CompareRun{Order: 2*i + 1, Variant: "base", Repeat: i + 1, Status: rundir.RunDone, RunDir: b},
			rundir.CompareRun{Order: 2*i + 2, Variant: "cand", Repeat: i + 1, Status: "failed", Error: "start: no such binary"})
	}
	if err := JudgeCompare(root, idx); err != nil {
		t.Fatal(err)
	}
	if got := Unmeasured(idx); !slices.Equal(got, []string{"cand"}) {
		t.Errorf("unmeasured %v, want [cand]", got)
	}
	if !slices.ContainsFunc(idx.Warnings, func(w string) bool { return strings.HasPrefix(w, "cand: no finished run") }) {
		t.Errorf("warnings %q do not name cand", idx.Warnings)
	}
	if res := CompareResult(root, idx); res.Verdict != Inconclusive || res.Why != "not judged: no finished run of cand" {
		t.Errorf("verdict %s: %s, want Inconclusive: not judged", res.Verdict, res.Why)
	}
}
