package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

const qaSteadyManifest = `name = "qa"
seed = 3
[node.validator]
count = 2
[load]
rate = 100
duration = "5s"
[qa]
probe_duration = "5s"
latency_emulation = true
duration = "10s"
cycles = 3
`

const qaRotateManifest = `name = "qa-rotate"
[node.validator]
count = 2
[node.eph]
role = "full"
count = 1
[rotate]
group = "eph"
cycles = 5
keep = "5s"
start = "5s"
catchup_timeout = "30s"
[load]
rate = 50
duration = "60s"
`

func TestQAConfig(t *testing.T) {
	m, err := manifest.Parse("qa.toml", []byte(qaSteadyManifest+"margin = 1.5\nbogus = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = QAFromManifest(m, DefaultQA())
	if err == nil || !strings.Contains(err.Error(), "qa.toml:14: qa.bogus: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
	m, _ = manifest.Parse("qa.toml", []byte(qaSteadyManifest+"margin = 1.5\n"))
	_, err = QAFromManifest(m, DefaultQA())
	if err == nil || !strings.Contains(err.Error(), "qa.toml:13: qa.margin: 1.5") {
		t.Errorf("bad margin: %v", err)
	}
	q := DefaultQA()
	q.JudgeLE, q.LE, q.MaxRepeats, q.Rates, q.PairOrder = true, false, 0, []float64{100}, "baab"
	var fields []string
	for _, e := range q.Validate() {
		var fe *manifest.FieldError
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field)
		}
	}
	if got := strings.Join(fields, ","); !strings.Contains(got, "rates") || !strings.Contains(got, "judge_le") || !strings.Contains(got, "max_repeats") || !strings.Contains(got, "pair_order") {
		t.Errorf("fields named: %s", got)
	}
	if errs := QuickQA().Validate(); len(errs) > 0 {
		t.Errorf("the quick profile is invalid: %v", errs)
	}
	if c, _ := New("qa"); c.Kind() != "qa" {
		t.Error("qa not registered")
	}
}

func TestQAPlanRefusal(t *testing.T) {
	cost := QACost{Nodes: 8, RotateNodes: 7, BlockRate: 1, TxBytes: 1024}
	q := DefaultQA()
	p := PlanQA(q, cost, 1, true, false)
	if p.Runs == 0 || p.WallS <= 0 || p.DiskBytes <= 0 || len(p.Steps) != 6 {
		t.Fatalf("plan %+v", p)
	}
	if PlanQA(q, cost, 1, true, true).DiskBytes <= p.DiskBytes {
		t.Error("keeping the homes needs no more disk")
	}
	if PlanQA(QuickQA(), cost, 1, true, false).WallS >= p.WallS {
		t.Error("the quick profile is not shorter")
	}
	if PlanQA(q, cost, 1, false, false).Runs >= p.Runs {
		t.Error("a reused baseline plans as many runs")
	}
	// A runner whose testnets take longer to come up (swarm) adds its
	// cost to every run of the plan, each step's and the total.
	slow := cost
	slow.RunnerS = 45
	ps := PlanQA(q, slow, 1, true, false)
	if ps.Runs != p.Runs || ps.WallS-p.WallS < 45*float64(p.Runs)-float64(len(p.Steps)) {
		t.Errorf("runner cost 45 s: %d runs in %v s, against %v s without it", ps.Runs, ps.WallS, p.WallS)
	}
	for i, s := range ps.Steps {
		if s.WallS-p.Steps[i].WallS < 45*float64(s.Runs)-1 {
			t.Errorf("step %s: %v s with the runner's cost, %v s without, over %d runs", s.Name, s.WallS, p.Steps[i].WallS, s.Runs)
		}
	}
	// Disk: both numbers named.
	p.FreeBytes, p.BudgetS = p.DiskBytes/2, p.WallS*2
	err := PlanRefusal(p, false)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), mib(p.DiskBytes)+" of disk, "+mib(p.FreeBytes)+" is free") {
		t.Errorf("disk refusal: %v", err)
	}
	// Budget.
	p.FreeBytes, p.BudgetS = p.DiskBytes*2, p.WallS/2
	if err := PlanRefusal(p, false); err == nil || !strings.Contains(err.Error(), "exceeds the budget") || !strings.Contains(err.Error(), "--quick") {
		t.Errorf("budget refusal: %v", err)
	}
	// Already the quick profile: the hint is another way to shorten it.
	if err := PlanRefusal(p, true); err == nil || strings.Contains(err.Error(), "--quick") || !strings.Contains(err.Error(), "--steps") {
		t.Errorf("budget refusal of a quick plan: %v", err)
	}
	p.BudgetS = p.WallS
	if err := PlanRefusal(p, false); err != nil {
		t.Errorf("a plan that fits: %v", err)
	}
	// Trimming: stated, and the trimmed plan fits when it can.
	planOf := func(qq *QA) rundir.QAPlan { return PlanQA(qq, cost, 1, true, false) }
	full := planOf(q).WallS
	notes := TrimToBudget(q, planOf, time.Duration(full-100)*time.Second)
	if len(notes) == 0 || planOf(q).WallS > full-100 || q.MaxRepeats >= DefaultQA().MaxRepeats {
		t.Errorf("trim: %v, now %v s, max_repeats %d", notes, planOf(q).WallS, q.MaxRepeats)
	}
	q = DefaultQA()
	if notes := TrimToBudget(q, planOf, time.Second); planOf(q).WallS <= 1 || len(notes) == 0 {
		t.Errorf("an impossible budget: %v", notes)
	}
}

// fakeRotateRun writes a run directory with faults.json cycles.
func fakeRotateRun(t *testing.T, dir string, raw []byte, catchUps []float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ := rundir.Open(dir)
	f := rundir.FaultResults{}
	for i, c := range catchUps {
		f.Cycles = append(f.Cycles, rundir.Cycle{RotateCycle: rundir.RotateCycle{Cycle: i + 1, Node: "eph0"}, CatchUpS: c, Duplicates: 2})
	}
	data, _ := json.Marshal(f)
	if err := errors.Join(d.WriteFile(rundir.FaultsFile, data), d.WriteFile(rundir.Manifest, raw)); err != nil {
		t.Fatal(err)
	}
}

func TestRunQA(t *testing.T) {
	for _, tc := range []struct {
		name                string
		candidate           string
		candCap, candTPS    float64
		candCatchUp         []float64
		want                judge.Result
		wantExit            int
		wantScenarioFailing string
		calib               *rundir.QACalibration
	}{
		{"A/A", "cometbft@v1.0.1", 1500, 1000, []float64{3, 3, 3}, "", -1, "", nil},
		{"regression", "cometbft@v0.38.17", 900, 600, []float64{3, -1, 3}, judge.ResultFail, 3, "Steady test", nil},
		// The calibration's spreads are pooled into the pairs' and the
		// steady rounds' intervals.
		{"A/A calibrated", "cometbft@v1.0.1", 1500, 1000, []float64{3, 3, 3}, "", -1, "", &rundir.QACalibration{
			Capacity: judge.NoisePrior{SDLog: 0.05, DF: 11}, Steady: map[string]judge.NoisePrior{"latency_avg": {SDLog: 0.05, DF: 9}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, rm, q := qaTestbeds(t) // adaptive repeats off: TestCompareAdaptiveRepeats
			root := t.TempDir()
			x := &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa", Name: "qa",
				Baseline: rundir.QABuild{Ref: "cometbft@v1.0.1"}, Candidate: rundir.QABuild{Ref: tc.candidate},
				Config: q.ConfigJSON(), Steps: QASteps(q, true), Calibration: tc.calib}
			isCand := func(m *manifest.Manifest) bool {
				return tc.candidate != x.Baseline.Ref && m.Node["validator"].Release == tc.candidate
			}
			rng := rand.New(rand.NewPCG(7, 8))
			n := 0
			var pairedRuns []bool // isCand of each paired run, in run order
			now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
			err := runTestQA(context.Background(), &QARun{Index: x, Config: q, Manifest: m, Rotate: rm}, Env{Dir: root,
				Now: func() time.Time { return now },
				Lab: qaLab{open: func(bm *manifest.Manifest, root string) Opener {
					f := &fakeNet{capacity: 1500, root: root}
					if isCand(bm) {
						f.capacity = tc.candCap
					}
					return f.open
				},
					measure: func(ctx context.Context, vm *manifest.Manifest, runsRoot string) (string, error) {
						n++
						dir := filepath.Join(runsRoot, vm.Name+"-"+time.Duration(n).String())
						if vm.Rotate != nil {
							c := []float64{3, 3, 3}
							if isCand(vm) {
								c = tc.candCatchUp
							}
							fakeRotateRun(t, dir, vm.Raw, c)
							return dir, nil
						}
						tps := 1000.0
						if isCand(vm) {
							tps = tc.candTPS
						}
						if filepath.Base(runsRoot) == PairedStep {
							pairedRuns = append(pairedRuns, strings.HasSuffix(vm.Name, "-"+rundir.QACandidate))
						}
						fakeRun(t, dir, vm.Raw, tps, 200, rng)
						return dir, nil
					}}})
			if err != nil {
				t.Fatal(err)
			}
			if !x.Complete {
				t.Errorf("incomplete: %+v", x.Steps)
			}
			if x.Saturation == nil || x.Saturation.Rate <= 0 {
				t.Fatalf("no load chosen: %+v", x.Saturation)
			}
			if tc.want == "" { // A/A: never Fail
				if x.Overall == judge.ResultFail {
					t.Errorf("A/A failed: %+v", x.Results)
				}
			} else if x.Overall != tc.want || x.ExitCode != tc.wantExit {
				t.Errorf("overall %s exit %d, want %s %d: %+v", x.Overall, x.ExitCode, tc.want, tc.wantExit, x.Results)
			}
			for _, r := range x.Results {
				if r.Scenario == tc.wantScenarioFailing && r.Result != judge.ResultFail {
					t.Errorf("%s: %s (%s)", r.Scenario, r.Result, r.Why)
				}
				if tc.wantScenarioFailing != "" && r.Scenario == "Rotating nodes" && (r.Result != judge.ResultFail || !strings.Contains(r.Why, "cycle 2 never caught up")) {
					t.Errorf("rotating: %s (%s)", r.Result, r.Why)
				}
				if r.Scenario == "Latency emulation" && r.Judged {
					t.Error("latency emulation judged without judge_le")
				}
			}
			// Step 1 decides by pairs: A/A passes, 600 against 1000 tx/s
			// fails (how often an A/A interval holds 1: TestOperatingCharacteristic).
			sat := x.Saturation
			if sat.Paired == nil || len(sat.Pairs) < q.MinPairs || sat.OverloadRate <= sat.Baseline.Lo {
				t.Fatalf("paired step: %+v", sat)
			}
			// The default order (abab): the builds' runs alternate, the
			// baseline first in every pair.
			for i, c := range pairedRuns {
				if c != (i%2 == 1) {
					t.Fatalf("paired runs in order %v (true: the candidate's), want the builds alternating, the baseline first", pairedRuns)
				}
			}
			for i, p := range sat.Pairs {
				if p.First != rundir.QABaseline {
					t.Errorf("pair %d ran %s first", i+1, p.First)
				}
			}
			if pooled := sat.Paired.PooledDF > 0; pooled != (tc.calib != nil) && !sat.Paired.Noisier {
				t.Errorf("pairs pooled with a calibration: %v, want %v (%s)", pooled, tc.calib != nil, sat.Why)
			}
			if tc.calib != nil {
				st, err := ReadCompareIndex(rundir.StepPath(root, x.Step("steady")))
				if err != nil {
					t.Fatal(err)
				}
				if st.Config.Priors["latency_avg"] != tc.calib.Steady["latency_avg"] {
					t.Errorf("the steady compare judged without the calibration: %+v", st.Config.Priors)
				}
			}
			wantSat := judge.ResultPass
			if tc.want == judge.ResultFail {
				wantSat = judge.ResultFail
			}
			if r := x.Results[0]; r.Scenario != "Saturation point" || r.Result != wantSat || !strings.Contains(r.Why, "detects a change of") {
				t.Errorf("saturation result %s (%s), want %s with its MDE", r.Result, r.Why, wantSat)
			}
			// The steady load is the baseline's saturation backed off by the
			// margin, or its throughput under overload (1000 tx/s here, below
			// the fake chain's sustainable 1400 or so) when lower.
			want := float64(int(x.Saturation.Baseline.Lo * (1 - q.Margin)))
			if x.Saturation.RateFrom != "" {
				want = math.Floor(1000 * (1 - q.Margin))
			}
			if x.Saturation.Rate < want-10 || x.Saturation.Rate > want+10 {
				t.Errorf("rate %g, want about %g (%s)", x.Saturation.Rate, want, x.Saturation.RateFrom)
			}
			// A resumed QA whose steps are done runs nothing again.
			before := n
			r, err := ReadQARun(root)
			if err != nil {
				t.Fatal(err)
			}
			again := r.Index
			if err := runTestQA(context.Background(), r, Env{Resume: root, Now: func() time.Time { return now },
				Lab: qaLab{open: func(*manifest.Manifest, string) Opener { t.Error("resume opened a testnet"); return nil },
					measure: func(context.Context, *manifest.Manifest, string) (string, error) {
						n++
						return "", errors.New("ran again")
					}}}); err != nil {
				t.Fatal(err)
			}
			if n != before || again.Overall != x.Overall {
				t.Errorf("resume ran %d more, overall %s vs %s", n-before, again.Overall, x.Overall)
			}
		})
	}
}

func TestReuseBaseline(t *testing.T) {
	q := QuickQA()
	mk := func(base string) *rundir.QAIndex {
		x := &rundir.QAIndex{Kind: "qa", Baseline: rundir.QABuild{Ref: base}, Config: q.ConfigJSON(), Steps: QASteps(q, true),
			Machine: &rundir.Machine{Hostname: "a", CPUs: 2}}
		for i := range x.Steps {
			x.Steps[i].Status, x.Steps[i].Dir = rundir.StepDone, "steps/"+x.Steps[i].Name
		}
		return x
	}
	raw := [][]byte{[]byte("a"), []byte("b")}
	earlier := mk("cometbft@v1.0.1")
	// As read back from qa.json, which keeps the configuration indented:
	// the same method in another layout (a byte comparison refused every
	// --baseline-from on real directories).
	var indented bytes.Buffer
	if err := json.Indent(&indented, earlier.Config, "  ", "  "); err != nil {
		t.Fatal(err)
	}
	earlier.Config = indented.Bytes()
	x := mk("cometbft@v1.0.1")
	for i := range x.Steps {
		x.Steps[i].Status, x.Steps[i].Dir = rundir.StepPending, ""
	}
	x.Machine = &rundir.Machine{Hostname: "b", CPUs: 2}
	warns, err := ReuseBaseline(x, "/qa/old", earlier, raw, raw)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "machine differs") {
		t.Fatalf("reuse: %v %v", warns, err)
	}
	if s := x.Step("saturation-baseline"); s.Status != rundir.StepDone || !s.Reused || s.Dir != "/qa/old/steps/saturation-baseline" {
		t.Errorf("baseline step %+v", s)
	}
	if x.Step("steady").Status != rundir.StepPending || x.Step(PairedStep).Status != rundir.StepPending {
		t.Error("steps other than the baseline's were reused")
	}
	for _, tc := range []struct {
		name string
		edit func(x *rundir.QAIndex, raw *[][]byte)
		want string
	}{
		{"testbed", func(_ *rundir.QAIndex, raw *[][]byte) { *raw = [][]byte{[]byte("a"), []byte("c")} }, "the testbed differs"},
		{"method", func(x *rundir.QAIndex, _ *[][]byte) { x.Config = DefaultQA().ConfigJSON() }, "the method differs"},
		{"baseline", func(x *rundir.QAIndex, _ *[][]byte) { x.Baseline.Ref = "cometbft@v0.38.17" }, "its baseline is"},
	} {
		y, r := mk("cometbft@v1.0.1"), raw
		tc.edit(y, &r)
		if _, err := ReuseBaseline(y, "/qa/old", earlier, r, raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// A bisection's confirmation: another baseline build at the earlier
	// one's operating point, said so.
	y := mk("/trees/parent")
	y.Machine = earlier.Machine
	warns, err = ReuseOperatingPoint(y, "/qa/old", earlier, raw, raw, true)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "the operating point of its baseline cometbft@v1.0.1 is used for /trees/parent") {
		t.Errorf("operating point reused: %v %v", warns, err)
	}
}

// A QA interrupted inside its steady step finishes that step's compare
// directory on resume: the same directory, the finished runs kept.
func TestQAResumeSteady(t *testing.T) {
	m, rm, q := qaTestbeds(t)
	root := t.TempDir()
	x := &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa", Name: "qa",
		Baseline: rundir.QABuild{Ref: "cometbft@v1.0.1"}, Candidate: rundir.QABuild{Ref: "cometbft@v1.0.1"},
		Config: q.ConfigJSON(), Steps: QASteps(q, true)}
	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	n, steadyRuns := 0, 0
	ctx, cancel := context.WithCancelCause(context.Background())
	env := func(ctx context.Context, stopAt int) Env {
		return Env{Now: func() time.Time { return now }, Lab: qaLab{
			open: func(bm *manifest.Manifest, root string) Opener { return (&fakeNet{capacity: 1500, root: root}).open },
			measure: func(ctx context.Context, vm *manifest.Manifest, runsRoot string) (string, error) {
				n++
				dir := filepath.Join(runsRoot, vm.Name+"-"+time.Duration(n).String())
				if vm.Rotate != nil {
					fakeRotateRun(t, dir, vm.Raw, []float64{3, 3, 3})
					return dir, nil
				}
				if filepath.Base(runsRoot) == PairedStep { // step 1's pairs
					fakeRun(t, dir, vm.Raw, 1000, 200, rng)
					return dir, nil
				}
				if steadyRuns++; steadyRuns == stopAt {
					cancel(errors.New("interrupt"))
					return "", context.Cause(ctx)
				}
				fakeRun(t, dir, vm.Raw, 1000, 200, rng)
				return dir, nil
			}}}
	}
	first := env(ctx, 3)
	first.Dir = root
	if err := runTestQA(ctx, &QARun{Index: x, Config: q, Manifest: m, Rotate: rm}, first); err == nil {
		t.Fatal("the interrupted QA returned no error")
	}
	s := x.Step("steady")
	if s == nil || s.Status == rundir.StepDone || s.Dir == "" {
		t.Fatalf("steady step after the interrupt: %+v", s)
	}
	firstDir := s.Dir
	r, err := ReadQARun(root)
	if err != nil {
		t.Fatal(err)
	}
	again := r.Index
	steadyRuns = 0
	resume := env(context.Background(), -1)
	resume.Resume = root
	if err := runTestQA(context.Background(), r, resume); err != nil {
		t.Fatal(err)
	}
	s = again.Step("steady")
	if s.Status != rundir.StepDone || s.Dir != firstDir {
		t.Errorf("resumed steady step: %s (%s) in %s, want done in %s", s.Status, s.Error, s.Dir, firstDir)
	}
	idx, err := ReadCompareIndex(rundir.StepPath(root, s))
	if err != nil {
		t.Fatal(err)
	}
	// The second attempt ran the steady runs not done (2 were) and the
	// latency-emulation step's.
	le, _ := ReadCompareIndex(rundir.StepPath(root, again.Step("latency-emulation")))
	if want := len(idx.Runs) - 2 + len(le.Runs); steadyRuns != want {
		t.Errorf("resume ran %d steady/LE runs, want %d (%d steady runs in all)", steadyRuns, want, len(idx.Runs))
	}
}

func TestCandidateCannotRun(t *testing.T) {
	runs := func(spec string) *rundir.CompareIndex {
		// spec: one letter per run, b/B baseline done/failed, c/C candidate done/failed.
		x := &rundir.CompareIndex{}
		for i, r := range spec {
			v, st := rundir.QABaseline, rundir.RunDone
			if r == 'c' || r == 'C' {
				v = rundir.QACandidate
			}
			if r == 'B' || r == 'C' {
				st = rundir.RunFailed
			}
			x.Runs = append(x.Runs, rundir.CompareRun{Order: i + 1, Variant: v, Status: st, Error: "warm-up: boom"})
		}
		return x
	}
	for _, c := range []struct {
		spec string
		want bool
	}{
		{"bCCbbC", true},  // every candidate run failed, every baseline run finished
		{"bCcbbC", false}, // one candidate run finished
		{"bCCBbC", false}, // the baseline failed too: the harness
		{"bC", false},     // one of each decides nothing
		{"bccb", false},
	} {
		why, got := candidateCannotRun(runs(c.spec))
		if got != c.want {
			t.Errorf("%s: %v (%s), want %v", c.spec, got, why, c.want)
		}
		if got && !strings.Contains(why, "3 of 3 runs failed") {
			t.Errorf("%s: %s", c.spec, why)
		}
	}
}

// The steady step's adaptive repeats must leave the steps after it their
// planned time (scaled by how far the finished steps overran): the full
// default QA of 2026-11-24 used its whole budget on adaptive pairs and
// its latency-emulation and rotating steps ended 1 min 18 s past it.
func TestStepDeadline(t *testing.T) {
	end := time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)
	plan := rundir.QAPlan{Steps: []rundir.QAPlannedStep{
		{Name: "saturation-baseline", WallS: 600, Runs: 10}, {Name: "saturation-candidate", WallS: 600, Runs: 10},
		{Name: "steady", WallS: 900}, {Name: "latency-emulation", WallS: 480},
		{Name: "rotate-baseline", WallS: 120}, {Name: "rotate-candidate", WallS: 120},
	}}
	// runsSteps are steps whose searches recorded their runs (since
	// 2026-11-29 late); steps leaves them out, as an older qa.json does.
	runsSteps := func(satWall float64, satRuns int, satStatus, leStatus string) []rundir.QAStep {
		return []rundir.QAStep{
			{Name: "saturation-baseline", Status: satStatus, Started: "t0", WallS: satWall, Runs: satRuns},
			{Name: "saturation-candidate", Status: satStatus, Started: "t0", WallS: satWall, Runs: satRuns},
			{Name: "steady", Status: rundir.StepPending},
			{Name: "latency-emulation", Status: leStatus},
			{Name: "rotate-baseline", Status: rundir.StepPending},
			{Name: "rotate-candidate", Status: rundir.StepPending},
		}
	}
	steps := func(satWall float64, satStatus, leStatus string) []rundir.QAStep {
		return runsSteps(satWall, 0, satStatus, leStatus)
	}
	for _, tc := range []struct {
		name string
		x    rundir.QAIndex
		step string
		want time.Duration // before end
	}{
		{"search on plan: the rest's plan", rundir.QAIndex{Plan: plan, Steps: steps(1200, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		// The search's overrun is the overloaded runs' (runClass): the
		// steady-rate steps after it keep their plan.
		{"search ran 1.5 x its plan: the steady-rate rest at its plan", rundir.QAIndex{Plan: plan, Steps: steps(1800, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		{"faster than planned: never less than the plan", rundir.QAIndex{Plan: plan, Steps: steps(600, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		{"a done step reserves nothing", rundir.QAIndex{Plan: plan, Steps: steps(1200, rundir.StepDone, rundir.StepDone)}, "steady", 240 * time.Second},
		{"a failed search is no measure of the plan", rundir.QAIndex{Plan: plan, Steps: steps(3000, rundir.StepFailed, rundir.StepPending)}, "steady", 720 * time.Second},
		{"the last step keeps the whole budget", rundir.QAIndex{Plan: plan, Steps: steps(1200, rundir.StepDone, rundir.StepPending)}, "rotate-candidate", 0},
		// Per run: the plan's 20 runs of 60 s. A search that probed twice
		// the rates the plan guessed, each at the plan's time per run, says
		// nothing of the steps after it, whose runs are fixed.
		{"search made twice its planned runs on time: the rest's plan", rundir.QAIndex{Plan: plan, Steps: runsSteps(2400, 20, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		{"search runs 1.25 x slower than planned: the steady-rate rest at its plan", rundir.QAIndex{Plan: plan, Steps: runsSteps(1500, 10, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		{"faster runs: never less than the plan", rundir.QAIndex{Plan: plan, Steps: runsSteps(1000, 20, rundir.StepDone, rundir.StepPending)}, "steady", 720 * time.Second},
		{"no plan (an old qa.json): the budget's end", rundir.QAIndex{Steps: steps(1200, rundir.StepDone, rundir.StepPending)}, "steady", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := end.Sub(stepDeadline(&tc.x, tc.step, end)); got != tc.want {
				t.Errorf("deadline %s before the budget's end, want %s", got, tc.want)
			}
		})
	}
	// Within a class the overrun carries over: the paired step after a
	// search 1.5 x slower per run, a steady-rate step after a slow steady.
	paired := rundir.QAPlan{Steps: append(slices.Clone(plan.Steps), rundir.QAPlannedStep{Name: PairedStep, WallS: 240, Runs: 6})}
	for _, tc := range []struct {
		name  string
		steps []rundir.QAStep
		step  string
		want  time.Duration
	}{
		{"the search's overrun scales the pairs, not the steady-rate steps", []rundir.QAStep{
			{Name: "saturation-baseline", Status: rundir.StepDone, Started: "t0", WallS: 900, Runs: 10},
			{Name: "saturation-candidate", Status: rundir.StepPending},
			{Name: PairedStep, Status: rundir.StepPending},
			{Name: "steady", Status: rundir.StepPending},
			{Name: "latency-emulation", Status: rundir.StepPending},
			{Name: "rotate-baseline", Status: rundir.StepPending},
		}, "saturation-candidate", (240*1.5 + 900 + 480 + 120) * time.Second},
		{"the paired step reserves the steady-rate steps at their plan", []rundir.QAStep{
			{Name: "saturation-baseline", Status: rundir.StepDone, Started: "t0", WallS: 1310, Runs: 20},
			{Name: PairedStep, Status: rundir.StepPending},
			{Name: "steady", Status: rundir.StepPending},
			{Name: "latency-emulation", Status: rundir.StepPending},
			{Name: "rotate-baseline", Status: rundir.StepPending},
			{Name: "rotate-candidate", Status: rundir.StepPending},
		}, PairedStep, (900 + 480 + 120 + 120) * time.Second},
		{"a steady step 1.5 x its plan: 1.5 x the steady-rate rest", []rundir.QAStep{
			{Name: "saturation-baseline", Status: rundir.StepDone, Started: "t0", WallS: 600, Runs: 10},
			{Name: PairedStep, Status: rundir.StepDone, Started: "t1", WallS: 240, Runs: 6},
			{Name: "steady", Status: rundir.StepDone, Started: "t2", WallS: 1350},
			{Name: "latency-emulation", Status: rundir.StepPending},
			{Name: "rotate-baseline", Status: rundir.StepPending},
			{Name: "rotate-candidate", Status: rundir.StepPending},
		}, "latency-emulation", 240 * 1.5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := rundir.QAIndex{Plan: paired, Steps: tc.steps}
			if got := end.Sub(stepDeadline(&x, tc.step, end)); got != tc.want {
				t.Errorf("deadline %s before the budget's end, want %s", got, tc.want)
			}
		})
	}
	if got := stepDeadline(&rundir.QAIndex{Plan: plan}, "steady", time.Time{}); !got.IsZero() {
		t.Errorf("no budget: deadline %s, want none", got)
	}
}

// A resumed QA has spent what its finished steps took: steps that ran
// together once, reused and unfinished ones not at all.
func TestBudgetSpent(t *testing.T) {
	x := &rundir.QAIndex{Steps: []rundir.QAStep{
		{Name: "saturation-baseline", Status: rundir.StepDone, Started: "t0", WallS: 300},
		{Name: "saturation-candidate", Status: rundir.StepDone, Started: "t0", WallS: 310},
		{Name: "steady", Status: rundir.StepDone, Started: "t1", WallS: 200},
		{Name: "latency-emulation", Status: rundir.StepDone, Started: "t2", WallS: 90, Reused: true},
		{Name: "rotate-baseline", Status: rundir.StepPending, Started: "t3", WallS: 50},
	}}
	if got, want := BudgetSpent(x), 510*time.Second; got != want {
		t.Errorf("BudgetSpent = %s, want %s", got, want)
	}
	if got := BudgetSpent(&rundir.QAIndex{}); got != 0 {
		t.Errorf("BudgetSpent of a QA with no finished step = %s", got)
	}
}

func TestCandidateCannotRunPairs(t *testing.T) {
	ok := rundir.QAPair{BaseTPS: 500, CandTPS: 490}
	broken := rundir.QAPair{BaseTPS: 500, CandExcluded: BrokenRun + ": committed none of 5000 sent txs"}
	failed := rundir.QAPair{BaseTPS: 500, CandExcluded: "run failed: up: timeout"}
	machine := rundir.QAPair{BaseTPS: 500, CandTPS: 200, CandExcluded: rundir.TestbedBoundPrefix + ": load from outside the run 1.5 cores"}
	bothBroken := rundir.QAPair{BaseExcluded: BrokenRun + ": …", CandExcluded: BrokenRun + ": …"}
	for _, c := range []struct {
		name  string
		pairs []rundir.QAPair
		want  bool
	}{
		{"one broken pair is not enough", []rundir.QAPair{broken}, false},
		{"broken in every pair", []rundir.QAPair{broken, failed, broken}, true},
		{"one pair counted", []rundir.QAPair{broken, ok, broken}, false},
		{"the machine bound it", []rundir.QAPair{machine, machine}, false},
		{"both sides broke: the testbed's", []rundir.QAPair{bothBroken, bothBroken}, false},
	} {
		if _, got := candidateCannotRunPairs(c.pairs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Excluded pairs stay out of the ratio.
	sat := rundir.QASaturation{Pairs: []rundir.QAPair{ok, machine, ok}}
	n := 0
	for _, p := range sat.JudgePairs() {
		if p.Excluded == "" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d pairs counted, want 2", n)
	}
}

// TestOnlySteps: --steps keeps the named scenarios' steps (saturation
// always: it chooses the load), and the plan sums those alone.
func TestOnlySteps(t *testing.T) {
	q := QuickQA()
	name := func(s rundir.QAStep) string { return s.Name }
	for _, c := range []struct {
		groups []string
		want   string
	}{
		{nil, "saturation-baseline saturation-paired steady rotate-baseline rotate-candidate"},
		{[]string{"saturation"}, "saturation-baseline saturation-paired"},
		{[]string{"steady"}, "saturation-baseline saturation-paired steady"},
		{[]string{"rotate"}, "saturation-baseline saturation-paired rotate-baseline rotate-candidate"},
	} {
		groups, err := CheckStepGroups(c.groups)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range OnlySteps(QASteps(q, true), name, groups) {
			got = append(got, s.Name)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v: %v, want %s", c.groups, got, c.want)
		}
		p := OnlyPlanned(PlanQA(q, QACost{}, 1, true, false), groups)
		var sum float64
		for _, s := range p.Steps {
			sum += s.WallS
		}
		if len(p.Steps) != len(got) || p.WallS != sum {
			t.Errorf("%v: plan of %d steps, %g s (steps sum to %g)", c.groups, len(p.Steps), p.WallS, sum)
		}
	}
	if _, err := CheckStepGroups([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `--steps: "nope"`) {
		t.Errorf("unknown group: %v", err)
	}
}

// TestWithReleases: a release line's variants, named from the references,
// every node group on its build, the control the base.
func TestWithReleases(t *testing.T) {
	m, err := manifest.Parse("qa.toml", []byte(qaSteadyManifest))
	if err != nil {
		t.Fatal(err)
	}
	refs := []string{"tendermint@v0.34.22", "cometbft@v0.38.17", "/src/cometbft", "cometbft@v1.0.1", "file:/bin/cometbft"}
	vm, names := WithReleases(m, refs, "cometbft@v1.0.1")
	if got := strings.Join(names, " "); got != "tm-v0-34-22 v0-38-17 cometbft v1-0-1 b5" {
		t.Errorf("names %q", got)
	}
	if vm.Variants["base"] != "v1-0-1" {
		t.Errorf("base %v", vm.Variants["base"])
	}
	for i, n := range names {
		v, err := vm.Variant(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for g, node := range v.Node {
			if node.Release != refs[i] {
				t.Errorf("%s: group %s on %s, want %s", n, g, node.Release, refs[i])
			}
		}
	}
}

// TestOverloadRateCapped: the pairs' rate is the overload factor times the
// baseline's highest sustainable rate, not past max_rate.
func TestOverloadRateCapped(t *testing.T) {
	q := QuickQA()
	q.Overload, q.MaxRate = 2.5, 3000
	for _, tt := range []struct{ lo, want float64 }{{800, 2000}, {1600, 3000}} {
		base := &rundir.SweepIndex{Search: &judge.SearchState{Low: tt.lo, High: 3000}}
		if got := saturationOf(q, base, nil).OverloadRate; got != tt.want {
			t.Errorf("highest sustainable %g: pairs at %g, want %g", tt.lo, got, tt.want)
		}
	}
}

// TestRaiseOverload: a pair whose baseline kept up with the "overload"
// rate measured the offered rate, not a capacity: it stops counting and
// the rate goes up by half, not past max_rate, at most three times.
func TestRaiseOverload(t *testing.T) {
	q := QuickQA()
	sat := &rundir.QASaturation{Connections: 1, OverloadRate: 1000}
	add := func(base float64) bool {
		sat.Pairs = append(sat.Pairs, rundir.QAPair{BaseTPS: base, CandTPS: base, Rate: sat.OverloadRate})
		return raiseOverload(sat, q, io.Discard)
	}
	if !add(990) || sat.OverloadRate != 1500 {
		t.Fatalf("a first pair that kept up (990 of 1000) did not raise the rate: %+v", sat)
	}
	if !strings.Contains(sat.Pairs[0].Excluded(), "below capacity: at 1000 tx/s") {
		t.Errorf("the pair at the old rate still counts: %q", sat.Pairs[0].Excluded())
	}
	// At 1500 the first pair is overloaded: the rate stays, and a later
	// pair that keeps up (a rate at the capacity) does not raise it.
	if add(1300) || add(1480) || sat.OverloadRate != 1500 {
		t.Fatalf("raised after the rate's first pair: %g", sat.OverloadRate)
	}
	if v := q.PairedRule().Decide(sat.JudgePairs()); v.Pairs != 2 || v.Excluded != 1 {
		t.Errorf("the rule counted %d pairs, excluded %d", v.Pairs, v.Excluded)
	}
	sat.Pairs, sat.OverloadRate = nil, 1500
	// Raised twice more, the second capped at max_rate (3000), then no more.
	if !add(1500) || sat.OverloadRate != 2250 || !add(2250) || sat.OverloadRate != 3000 {
		t.Fatalf("raises: %g", sat.OverloadRate)
	}
	if add(3000) || sat.OverloadRate != 3000 {
		t.Errorf("raised past max_rate: %g", sat.OverloadRate)
	}
	// Without a max_rate, three raises at most.
	q.MaxRate, sat.Pairs, sat.OverloadRate = 0, nil, 1000
	for i := range 3 {
		if !add(sat.OverloadRate) {
			t.Fatalf("raise %d refused at %g", i+1, sat.OverloadRate)
		}
	}
	if add(sat.OverloadRate) {
		t.Errorf("a fourth raise, to %g", sat.OverloadRate)
	}
	if sat.Pairs[len(sat.Pairs)-1].Excluded() != "" {
		t.Error("the pair at the last rate was excluded")
	}
}

// A QA at an earlier QA's operating point starts its pairs where the
// earlier pairs ended, not at the rate its baseline kept up with.
func TestOverloadFrom(t *testing.T) {
	earlierDir := t.TempDir()
	earlier := &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa",
		Saturation: &rundir.QASaturation{Connections: 1, OverloadRate: 1440}}
	if err := rundir.QARecord.Write(earlierDir, earlier); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		from       string
		conns      int
		rate, want float64
	}{
		{"raised earlier", earlierDir, 1, 960, 1440},
		{"no earlier QA", "", 1, 960, 960},
		{"already higher", earlierDir, 1, 2000, 2000},
		{"other connections", earlierDir, 2, 960, 960},
		{"a grid QA: no pairs", earlierDir, 1, 0, 0},
	} {
		x := &rundir.QAIndex{BaselineFrom: tc.from, Saturation: &rundir.QASaturation{Connections: tc.conns, OverloadRate: tc.rate}}
		overloadFrom(x, io.Discard)
		if got := x.Saturation.OverloadRate; got != tc.want {
			t.Errorf("%s: overload rate %g, want %g", tc.name, got, tc.want)
		}
	}
}

// TestQADocTable: docs/qa.md's [qa] table names every key of the method's
// configuration, with the full QA's default and --quick's value as the
// code has them.
func TestQADocTable(t *testing.T) {
	data, err := os.ReadFile("../../docs/qa.md")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ def, quick string }
	doc := map[string]row{}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## The `[qa]` table") {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "## ") {
			break
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|") // an empty cell is "| |"
		unquote := func(c string) string {
			c = strings.Trim(strings.TrimSpace(c), "`")
			// "150s" and "2m30s" are one duration.
			if d, err := time.ParseDuration(strings.Trim(c, `"`)); err == nil && strings.HasPrefix(c, `"`) {
				return fmt.Sprintf("%q", d.String())
			}
			return c
		}
		doc[unquote(cells[0])] = row{unquote(cells[1]), unquote(cells[2])}
	}
	tomlValue := func(v reflect.Value) string {
		switch x := v.Interface().(type) {
		case rundir.Duration:
			return fmt.Sprintf("%q", x.Duration.String())
		case string:
			return fmt.Sprintf("%q", x)
		case []string:
			q := make([]string, len(x))
			for i, s := range x {
				q[i] = fmt.Sprintf("%q", s)
			}
			return "[" + strings.Join(q, ", ") + "]"
		case []float64:
			q := make([]string, len(x))
			for i, f := range x {
				q[i] = fmt.Sprint(f)
			}
			return "[" + strings.Join(q, ", ") + "]"
		default:
			return fmt.Sprint(x)
		}
	}
	def, quick := reflect.ValueOf(*DefaultQA()), reflect.ValueOf(*QuickQA())
	typ := def.Type()
	for i := range typ.NumField() {
		key := strings.Split(typ.Field(i).Tag.Get("toml"), ",")[0]
		r, ok := doc[key]
		if !ok {
			t.Errorf("docs/qa.md's [qa] table has no row for %s", key)
			continue
		}
		delete(doc, key)
		d, qv := tomlValue(def.Field(i)), tomlValue(quick.Field(i))
		if r.def != d {
			t.Errorf("%s: docs/qa.md's default %s, the code's %s", key, r.def, d)
		}
		if want := map[bool]string{true: "", false: qv}[qv == d]; r.quick != want && !(r.quick == qv) {
			t.Errorf("%s: docs/qa.md's --quick value %q, the code's %s (leave it empty when the same as the default)", key, r.quick, qv)
		}
	}
	for key := range doc {
		t.Errorf("docs/qa.md's [qa] table has %s, which is no key of the configuration", key)
	}
}

// TestPairFirst: abab puts the baseline first in every pair, so the
// builds' runs alternate; abba (and a qa.json from before the key)
// alternates which build goes first.
func TestPairFirst(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  string // the runs of four pairs, b = baseline, c = candidate
	}{
		{rundir.PairOrderABAB, "bcbcbcbc"},
		{rundir.PairOrderABBA, "bccbbccb"},
		{"", "bccbbccb"},
	} {
		var got strings.Builder
		for i := range 4 {
			first := pairFirst(tc.order, i)
			second := map[string]string{rundir.QABaseline: rundir.QACandidate, rundir.QACandidate: rundir.QABaseline}[first]
			got.WriteString(first[:1] + second[:1])
		}
		if got.String() != tc.want {
			t.Errorf("%q: %s, want %s", tc.order, got.String(), tc.want)
		}
	}
}

// qaLab is the tests' lab: a sweep's testnets from open (root: the sweep's
// directory), whole runs from measure.
type qaLab struct {
	open    func(m *manifest.Manifest, root string) Opener
	measure func(ctx context.Context, m *manifest.Manifest, dir string) (string, error)
}

func (l qaLab) Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error) {
	return l.open(m, filepath.Dir(dir))(ctx)
}

func (l qaLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	return l.measure(ctx, m, dir)
}

// runTestQA runs r through its executor: a new QA in env.Dir, or the one
// in env.Resume finished.
func runTestQA(ctx context.Context, r *QARun, env Env) error {
	ex, err := r.NewExecutor(env)
	if err != nil {
		return err
	}
	_, err = ex.Run(ctx)
	return err
}
