package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// qaOptions are what the QA's steps run with: its directory, settings and
// testbeds, and the env's lab (real testnets in the CLI, fakes in tests).
type qaOptions struct {
	Root     string
	Config   *QA
	Manifest *manifest.Manifest // the steady testbed
	Rotate   *manifest.Manifest // the rotating testbed (nil: no step 4)
	// Lab opens a sweep's testnets and runs whole runs.
	Lab Lab
	// Deadline bounds adaptive repeats (the budget's end).
	Deadline time.Time
	// Cooldown is the pause between a comparison's runs.
	Cooldown time.Duration
	// KeepHomes keeps the node homes of finished steps (by default they
	// are removed: the reports read the run directories only).
	KeepHomes bool
	Log       io.Writer
	Now       func() time.Time
}

// QA step names, in the order they run.
func QASteps(q *QA, withRotate bool) []rundir.QAStep {
	steps := []rundir.QAStep{{Name: "saturation-baseline", Kind: "sweep", Build: rundir.QABaseline}}
	if q.Grid {
		steps = append(steps, rundir.QAStep{Name: "saturation-candidate", Kind: "sweep", Build: rundir.QACandidate})
	} else {
		// The candidate is not searched: the decision is paired runs of
		// both builds at the baseline's overload rate.
		steps = append(steps, rundir.QAStep{Name: PairedStep, Kind: "pairs", Build: "both"})
	}
	steps = append(steps, rundir.QAStep{Name: "steady", Kind: "compare", Build: "both"})
	if q.LE {
		steps = append(steps, rundir.QAStep{Name: "latency-emulation", Kind: "compare", Build: "both"})
	}
	if withRotate && q.Rotate != "" {
		steps = append(steps, rundir.QAStep{Name: "rotate-baseline", Kind: "run", Build: rundir.QABaseline},
			rundir.QAStep{Name: "rotate-candidate", Kind: "run", Build: rundir.QACandidate})
	}
	for i := range steps {
		steps[i].Status = rundir.StepPending
	}
	return steps
}

// prunedEnv removes a sweep testnet's node homes once it is down.
type prunedEnv struct {
	Testnet
	log io.Writer
}

func (e *prunedEnv) Close(ctx context.Context) error {
	err := e.Testnet.Close(ctx)
	if err == nil {
		pruneHomes(e.log, e.Testnet.RunDir())
	}
	return err
}

// prunedLab removes each finished run's node homes (the reports read the
// run directory): a step holds one testnet's stores at a time.
type prunedLab struct {
	Lab
	log io.Writer
}

func (l prunedLab) Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error) {
	tn, err := l.Lab.Open(ctx, m, dir)
	if err != nil {
		return tn, err
	}
	return &prunedEnv{Testnet: tn, log: l.log}, nil
}

func (l prunedLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	runDir, err := l.Lab.Steady(ctx, m, dir)
	if runDir != "" {
		pruneHomes(l.log, runDir)
	}
	return runDir, err
}

// runQA runs every step of x that is not done (a resumed QA goes on from
// its last finished step), writing qa.json after each, then fills in the
// Test Results. A cancelled ctx stops it keeping every finished step.
func runQA(ctx context.Context, x *rundir.QAIndex, o qaOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	q := o.Config
	stepsDir := filepath.Join(o.Root, rundir.QAStepsDir)
	if err := os.MkdirAll(stepsDir, 0o755); err != nil {
		return err
	}
	save := func() error { return rundir.QARecord.Write(o.Root, x) }
	var runErr error
	run := func(name string, f func(s *rundir.QAStep) (string, error)) {
		s := x.Step(name)
		if s == nil || s.Status == rundir.StepDone || s.Status == rundir.StepSkipped || runErr != nil {
			return
		}
		if ctx.Err() != nil {
			runErr = context.Cause(ctx)
			return
		}
		start := o.Now()
		s.Started, s.Error = start.UTC().Format(time.RFC3339), ""
		fmt.Fprintf(o.Log, "qa: step %s\n", name)
		dir, err := f(s)
		if dir != "" {
			s.Dir = RelTo(o.Root, dir)
		}
		s.Finished = o.Now().UTC().Format(time.RFC3339)
		s.WallS = math.Round(o.Now().Sub(start).Seconds())
		switch {
		case err != nil && ctx.Err() != nil:
			s.Status, s.Error = rundir.StepFailed, "interrupted: "+err.Error()
			runErr = context.Cause(ctx)
		case err != nil:
			s.Status, s.Error = rundir.StepFailed, err.Error()
			fmt.Fprintf(o.Log, "qa: step %s failed: %v\n", name, err)
		default:
			s.Status = rundir.StepDone
			if !o.KeepHomes {
				pruneHomes(o.Log, rundir.StepPath(o.Root, s))
			}
		}
		if werr := save(); werr != nil && runErr == nil {
			runErr = werr
		}
	}
	refs := map[string]string{rundir.QABaseline: x.Baseline.Ref, rundir.QACandidate: x.Candidate.Ref}
	lab := o.Lab
	if !o.KeepHomes {
		lab = prunedLab{Lab: lab, log: o.Log}
	}
	// A step runs as the experiment it is (a search, a compare, a rotate),
	// through this env: the QA's lab, clock, log and settle.
	env := Env{Lab: lab, Log: o.Log, Now: o.Now, Cooldown: o.Cooldown}

	// Step 1: saturation, as the sweep experiments it is made of. The
	// search is the baseline's (the paired step decides the candidate):
	// SearchBuilds, a fresh testnet per probe, interleaving the builds'
	// probes were there two; --grid measures a grid per build.
	if q.Grid {
		for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
			run("saturation-"+b, func(s *rundir.QAStep) (string, error) {
				return gridStep(ctx, o, env, s, b, refs[b], save)
			})
		}
	} else {
		runErr = errors.Join(runErr, searchBoth(ctx, x, o, env, refs, save))
	}
	sweeps := map[string]*rundir.SweepIndex{}
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		if s := x.Step("saturation-" + b); s != nil && s.Status == rundir.StepDone {
			if idx, err := rundir.SweepRecord.Read(rundir.StepPath(o.Root, s)); err == nil {
				idx.Judge()
				sweeps[b] = idx
			}
		}
	}
	if x.Saturation == nil && sweeps[rundir.QABaseline] != nil {
		x.Saturation = saturationOf(q, sweeps[rundir.QABaseline], sweeps[rundir.QACandidate])
		overloadFrom(x, o.Log)
		_ = save()
	}
	run(PairedStep, func(s *rundir.QAStep) (string, error) {
		return runPairs(ctx, x, o, s, lab.Steady, save)
	})
	steadyM := func() (*manifest.Manifest, error) {
		if x.Saturation == nil || x.Saturation.Rate <= 0 {
			return nil, errors.New("no load chosen: the baseline's saturation search found no sustainable rate")
		}
		m := *o.Manifest
		m.Load.Connections, m.Load.Rate = x.Saturation.Connections, x.Saturation.Rate
		m.Load.Duration, m.Load.Count = q.Duration, 0
		m.Load.Shape, m.Load.RampFrom = "constant", 0
		return &m, nil
	}
	compareStep := func(le bool, cfg *Compare) func(s *rundir.QAStep) (string, error) {
		return func(s *rundir.QAStep) (string, error) {
			m, err := steadyM()
			if err != nil {
				return "", err
			}
			vm := WithBuilds(m, x.Baseline.Ref, x.Candidate.Ref, le)
			if le {
				vm.Name = shortName(m.Name, "le")
			}
			// A step interrupted mid-way finishes its own compare directory
			// rather than starting a new one.
			var resume string
			if p := rundir.StepPath(o.Root, s); p != "" {
				if _, err := ReadCompareIndex(p); err == nil {
					resume = p
					fmt.Fprintf(o.Log, "qa: resuming %s\n", s.Dir)
				}
			}
			deadline := stepDeadline(x, s.Name, o.Deadline)
			if !deadline.Equal(o.Deadline) {
				fmt.Fprintf(o.Log, "qa: %s adds repeats until %s (the budget's end less %s for the steps after it)\n",
					s.Name, deadline.Local().Format("15:04:05"), o.Deadline.Sub(deadline).Round(time.Second))
			}
			cenv := env
			cenv.Output, cenv.Deadline, cenv.Resume = stepsDir, deadline, resume
			cx, err := cfg.NewExecutor(vm, cenv)
			if err != nil {
				return "", err
			}
			res, err := cx.Run(ctx)
			if ci, cerr := ReadCompareIndex(res.Dir); res.Dir != "" && cerr == nil {
				s.Runs = len(ci.Runs)
			}
			if err == nil && !res.Complete {
				err = errors.New("not every run finished")
			}
			return res.Dir, err
		}
	}
	steadyCfg := q.CompareConfig()
	if x.Calibration != nil {
		steadyCfg.Priors = x.Calibration.Steady
	}
	run("steady", compareStep(false, steadyCfg))
	run("latency-emulation", compareStep(true, q.LEConfig()))

	// Step 4: rotating nodes, per build, each one run of the rotating testbed.
	rot := map[string][]float64{}
	var rotWhy string
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		run("rotate-"+b, func(s *rundir.QAStep) (string, error) {
			rm := *o.Rotate
			r := *rm.Rotate
			r.Cycles = q.Cycles
			rm.Rotate = &r
			rm.Load.Duration = q.RotateDuration
			bm, err := BuildManifest(&rm, b, refs[b])
			if err != nil {
				return "", err
			}
			// The rotate experiment's verdict is not the step's: the QA
			// judges the two builds' catch-up times against each other.
			renv := env
			renv.Dir = filepath.Join(stepsDir, "rotate-"+b) // a resumed step's run goes beside the failed one
			if err := os.MkdirAll(renv.Dir, 0o755); err != nil {
				return "", err
			}
			rx, err := (&Rotate{}).NewExecutor(bm, renv)
			if err != nil {
				return "", err
			}
			res, err := rx.Run(ctx)
			if res.Dir != "" {
				s.Runs = 1
			}
			return res.Dir, err
		})
	}
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		s := x.Step("rotate-" + b)
		if s == nil || s.Status != rundir.StepDone {
			continue
		}
		d, err := rundir.Open(rundir.StepPath(o.Root, s))
		if err != nil {
			rotWhy = fmt.Sprintf("rotate-%s: %v", b, err)
			continue
		}
		f, err := d.ReadFaults()
		if err != nil {
			rotWhy = fmt.Sprintf("rotate-%s: %v", b, err)
			continue
		}
		cs, dups := CatchUps(f)
		rot[b] = cs
		s.Note = fmt.Sprintf("%d cycles, %d duplicates", len(cs), dups)
		if f.Halted != "" {
			s.Note += "; chain halted: " + f.Halted
		}
	}

	// Test Results from what finished.
	var steady, le *rundir.CompareIndex
	// A step that did not finish still shows what it judged (its index is
	// then incomplete: a Pass over it reads Inconclusive).
	if s := x.Step("steady"); s != nil && s.Dir != "" {
		steady, _ = ReadCompareIndex(rundir.StepPath(o.Root, s))
	}
	if s := x.Step("latency-emulation"); s != nil && s.Dir != "" {
		le, _ = ReadCompareIndex(rundir.StepPath(o.Root, s))
	}
	QAResults(x, q, steady, le, rot[rundir.QABaseline], rot[rundir.QACandidate], q.Cycles, rotWhy)
	x.Complete = runErr == nil
	for _, s := range x.Steps {
		if s.Status != rundir.StepDone {
			x.Complete = false
		}
	}
	x.Finished = o.Now().UTC().Format(time.RFC3339)
	return errors.Join(runErr, save())
}

// gridStep is one build's saturation grid (--grid): a sweep experiment in
// its step directory, claimed and recorded in qa.json before it measures
// so that an interrupted step is finished, not started again.
func gridStep(ctx context.Context, o qaOptions, env Env, s *rundir.QAStep, b, ref string, save func() error) (string, error) {
	bm, err := BuildManifest(o.Manifest, b, ref)
	if err != nil {
		return "", err
	}
	senv := env
	if p := rundir.StepPath(o.Root, s); p != "" {
		if _, err := Open(p); err == nil {
			senv.Resume = p
		}
	}
	if senv.Resume == "" {
		dir, err := rundir.ClaimStamped(filepath.Join(o.Root, rundir.QAStepsDir), bm.Name+"-sweep", o.Now(), rundir.SweepCells, rundir.SweepNets)
		if err != nil {
			return "", err
		}
		s.Dir, senv.Dir = RelTo(o.Root, dir), dir
		if err := save(); err != nil {
			return dir, err
		}
	}
	sx, err := o.Config.SweepConfig().NewExecutor(bm, senv)
	if err != nil {
		return "", err
	}
	res, err := sx.Run(ctx)
	return res.Dir, err
}

// searchBoth runs the saturation steps not yet done as one interleaved
// search (SearchBuilds in steps/saturation/, a search directory per build;
// a reused baseline leaves the candidate's alone).
func searchBoth(ctx context.Context, x *rundir.QAIndex, o qaOptions, env Env, refs map[string]string, save func() error) error {
	var builds []Build
	var steps []*rundir.QAStep
	var root string // an interrupted search's directory: finish it
	start := o.Now()
	for _, b := range []string{rundir.QABaseline, rundir.QACandidate} {
		s := x.Step("saturation-" + b)
		if s == nil || s.Status == rundir.StepDone {
			continue
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		s.Started, s.Error = start.UTC().Format(time.RFC3339), ""
		bm, err := BuildManifest(o.Manifest, b, refs[b])
		if err == nil && s.Dir != "" {
			if p := rundir.StepPath(o.Root, s); filepath.Base(p) == b {
				root = filepath.Dir(p)
			} else {
				err = fmt.Errorf("%s was started by an older benchnet (its search is not in a directory named %q): run the QA again", s.Dir, b)
			}
		}
		if err != nil {
			s.Status, s.Error = rundir.StepFailed, err.Error()
			return errors.Join(err, save())
		}
		builds = append(builds, Build{Name: b, Manifest: bm})
		steps = append(steps, s)
	}
	if len(builds) == 0 {
		return nil
	}
	for _, s := range steps {
		s.Note = "the baseline's operating point (the candidate is judged by the paired step)"
		if len(steps) > 1 {
			s.Note = "searched interleaved with the other build's probes"
		}
	}
	senv := env.ResumeIn(root)
	if root == "" {
		var err error
		if senv, err = env.Sub(filepath.Join(o.Root, rundir.QAStepsDir), "saturation"); err != nil {
			return err
		}
		for i, s := range steps {
			s.Dir = RelTo(o.Root, filepath.Join(senv.Dir, builds[i].Name))
		}
		if err := save(); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Log, "qa: step saturation (%d build(s), probes interleaved)\n", len(builds))
	res, err := SearchBuilds(ctx, senv, *o.Config.SweepConfig(), builds)
	end := o.Now()
	for i, s := range steps {
		s.Finished, s.WallS = end.UTC().Format(time.RFC3339), math.Round(end.Sub(start).Seconds())
		idx, rerr := rundir.SweepRecord.Read(rundir.StepPath(o.Root, s))
		if rerr == nil && idx.Search != nil {
			s.Runs = idx.Search.Runs
		}
		switch {
		case err != nil && ctx.Err() != nil:
			s.Status, s.Error = rundir.StepFailed, "interrupted: "+err.Error()
		case i < len(res) && res[i].Err != "":
			s.Status, s.Error = rundir.StepFailed, res[i].Err
		case err != nil && len(res) == 0:
			s.Status, s.Error = rundir.StepFailed, err.Error()
		case rerr != nil:
			s.Status, s.Error = rundir.StepFailed, rerr.Error()
		case !idx.Complete:
			s.Status, s.Error = rundir.StepFailed, "the search did not complete"
		default:
			s.Status = rundir.StepDone
			if !o.KeepHomes {
				pruneHomes(o.Log, rundir.StepPath(o.Root, s))
			}
		}
	}
	if err != nil && ctx.Err() != nil {
		return errors.Join(context.Cause(ctx), save())
	}
	if err != nil {
		fmt.Fprintf(o.Log, "qa: saturation failed: %v\n", err)
	}
	return save()
}

// pruneHomes removes the node homes (the chains' stores) under a finished
// step's directory: every "homes" directory beside a plan.json.
func pruneHomes(log io.Writer, dir string) {
	if dir == "" {
		return
	}
	var freed int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != rundir.Homes {
			return nil
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), rundir.Plan)); err != nil {
			return nil
		}
		_ = filepath.WalkDir(p, func(_ string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if fi, err := e.Info(); err == nil {
					freed += fi.Size()
				}
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			fmt.Fprintf(log, "qa: remove %s: %v\n", p, err)
		}
		return filepath.SkipDir
	})
	if freed > 0 {
		fmt.Fprintf(log, "qa: removed the node homes under %s (%d MiB)\n", dir, freed>>20)
	}
}

func shortName(name, suffix string) string {
	if len(name)+1+len(suffix) <= 20 {
		return name + "-" + suffix
	}
	return name[:min(len(name), 19-len(suffix))] + "-" + suffix
}

// saturationOf reads the baseline's bracket and chooses the load: the
// baseline's sustainable rate backed off by the margin. A grid QA judges
// the candidate's bracket against it; a search QA decides by the paired
// runs that follow (the overload rate is chosen here).
func saturationOf(q *QA, base, cand *rundir.SweepIndex) *rundir.QASaturation {
	s := &rundir.QASaturation{Connections: q.Connections, Margin: q.Margin, Baseline: bracket(base)}
	s.Rate = math.Floor(s.Baseline.Lo * (1 - q.Margin))
	if !q.Grid {
		// Past the highest sustainable rate by the overload factor: the
		// lowest saturated rate x 1.25 was past what the load generator
		// could offer beside 8 saturated nodes on 2 cores (it sent 718 to
		// 1390 of 1527 tx/s, its runs lasting 11 to 25 s instead of 10, so
		// each run had another load: 2026-11-28); the highest sustainable
		// rate is one the generator kept up with.
		top := s.Baseline.Lo
		if top <= 0 {
			top = s.Baseline.Hi
		}
		s.OverloadRate = roundRate(top * q.Overload)
		if q.MaxRate > 0 {
			// Not past what the search may offer, as the raises.
			s.OverloadRate = min(s.OverloadRate, q.MaxRate)
		}
		s.Verdict, s.Why = judge.OutcomeInconclusive, "the paired runs did not finish"
		return s
	}
	if cand != nil {
		s.Candidate = bracket(cand)
	}
	v := judge.CompareSaturation(s.Baseline.Open(), s.Candidate.Open(), q.SaturationThreshold/100)
	s.Verdict, s.Why = v.Outcome, v.Why
	if cand == nil {
		s.Verdict, s.Why = judge.OutcomeInconclusive, "the candidate's saturation step did not finish"
	}
	return s
}

func roundRate(r float64) float64 { return math.Round(r*10) / 10 }

// overloadFrom starts the pairs of a QA that reuses an earlier one's
// operating point (--baseline-from) at the rate the earlier pairs ended
// on: when its baseline kept up with the first overload rate, the pairs
// were raised (raiseOverload), and every later QA of the same baseline
// would otherwise spend its first pair finding that again (a release
// line of 6 builds spent 6 pairs so, 2026-11-28).
func overloadFrom(x *rundir.QAIndex, log io.Writer) {
	if x.BaselineFrom == "" || x.Saturation == nil || x.Saturation.OverloadRate <= 0 { // a grid QA has no pairs
		return
	}
	earlier, err := rundir.QARecord.Read(x.BaselineFrom)
	if err != nil || earlier.Saturation == nil {
		return
	}
	e := earlier.Saturation
	if e.Connections != x.Saturation.Connections || !(e.OverloadRate > x.Saturation.OverloadRate) {
		return
	}
	fmt.Fprintf(log, "qa: the pairs start at %g tx/s per connection, where those of %s ended (raised from %g: its baseline kept up)\n",
		e.OverloadRate, x.BaselineFrom, x.Saturation.OverloadRate)
	x.Saturation.OverloadRate = e.OverloadRate
}

// bracket is a sweep's saturation interval: a search's [low, high); a
// grid's highest sustainable rate at the chosen connections and the first
// saturated one above it.
func bracket(x *rundir.SweepIndex) judge.Interval {
	if x.Search != nil {
		return judge.Interval{Lo: x.Search.Low, Hi: x.Search.High}
	}
	var iv judge.Interval
	if x.Grid == nil || x.Grid.Chosen == nil {
		return iv
	}
	iv.Lo = x.Grid.Chosen.Rate
	for _, p := range x.Grid.Points {
		if p.Connections == x.Grid.Chosen.Connections && p.Rate > iv.Lo && p.State != judge.OK && (iv.Hi == 0 || p.Rate < iv.Hi) {
			iv.Hi = p.Rate
		}
	}
	return iv
}

// ConfigJSON encodes q for qa.json.
func (q *QA) ConfigJSON() json.RawMessage {
	data, _ := json.Marshal(q)
	return data
}

// BudgetSpent is the wall time x's finished steps took (steps that ran
// together, sharing a start, counted once; steps reused from another QA
// not at all): what a resumed QA has already spent of its budget. An
// interrupted step's partial time is not known and not counted; its
// finished runs are kept, so it costs only its remaining runs again.
func BudgetSpent(x *rundir.QAIndex) time.Duration {
	walls := map[string]float64{}
	for _, s := range x.Steps {
		if s.Status == rundir.StepDone && !s.Reused && s.WallS > 0 {
			walls[s.Started] = max(walls[s.Started], s.WallS)
		}
	}
	var sum float64
	for _, w := range walls {
		sum += w
	}
	return time.Duration(sum * float64(time.Second))
}

// stepDeadline is when step name may no longer add adaptive work: the
// budget's end less the planned wall time of the steps still to run after
// it, each class's plan scaled by how far the finished steps of that class
// overran theirs per run (runClass). Before the scale, the steady step's
// adaptive pairs could use the whole budget and the steps after them ran
// past it (61 min 18 s of a 60 min budget). Per run, not per step: a
// search that probed 19 rates where the plan guessed 11 ran 2.1 x its plan
// at 1.2 x the time per run, and scaling the fixed steps after it by 2.1
// stopped an A/A QA's paired step after 3 of its 14 pairs (2026-11-29).
// Per class, not across them: overloaded runs overran their plan where
// steady-rate runs did not (runClass), and scaling steady, latency
// emulation and rotation by the search's 1.58 stopped an A/A QA's pairs
// undecided after 4 with 12 of its 60 minutes left unused at the end. Steps
// recorded without their runs (older qa.json) scale per step.
func stepDeadline(x *rundir.QAIndex, name string, end time.Time) time.Time {
	if end.IsZero() {
		return end
	}
	planned := map[string]rundir.QAPlannedStep{}
	for _, ps := range x.Plan.Steps {
		planned[ps.Name] = ps
	}
	// Steps that ran together (the interleaved search) share one start
	// and one wall time: count that wall once against their summed plan.
	ran := map[bool]map[string]*stepSpan{}
	rest := map[bool]float64{}
	after := false
	for _, s := range x.Steps {
		ps := planned[s.Name]
		class := runClass(s.Name)
		switch {
		case s.Name == name:
			after = true
		case after && s.Status != rundir.StepDone && s.Status != rundir.StepSkipped:
			rest[class] += ps.WallS
		case !after && s.Status == rundir.StepDone && !s.Reused && s.WallS > 0 && ps.WallS > 0:
			if ran[class] == nil {
				ran[class] = map[string]*stepSpan{}
			}
			sp := ran[class][s.Started]
			if sp == nil {
				sp = &stepSpan{}
				ran[class][s.Started] = sp
			}
			sp.wall = max(sp.wall, s.WallS)
			sp.plan += ps.WallS
			sp.runs += s.Runs
			sp.plannedRuns += ps.Runs
		}
	}
	var reserve float64
	for class, r := range rest {
		reserve += r * overrun(ran[class])
	}
	return end.Add(-time.Duration(reserve * float64(time.Second)))
}

// runClass tells the QA's two kinds of run apart for the budget: true for
// the saturation steps' (probes and pairs at or past the chain's capacity,
// each waiting for its backlog to drain), false for steady-rate runs
// (steady, latency emulation, rotation). The plan models the second well
// and the first short: in one A/A default QA (2026-11-29, night) the search
// took 1.58 x its plan per run and the pairs 1.34 x, while steady took
// 1.00 x, latency emulation 1.00 x and rotation 0.96 x.
func runClass(step string) bool { return strings.HasPrefix(step, "saturation") }

// stepSpan is finished steps that shared a start: their wall time once,
// their plans' wall times and runs summed, and the runs they made.
type stepSpan struct {
	wall, plan        float64
	runs, plannedRuns int
}

// overrun is how much slower than planned the finished steps ran, at
// least 1: their time per run against the plan's when every one of them
// recorded its runs, else their wall time against the plan's.
func overrun(ran map[string]*stepSpan) float64 {
	var wall, plan float64
	var runs, plannedRuns int
	perRun := true
	for _, sp := range ran {
		wall, plan = wall+sp.wall, plan+sp.plan
		runs, plannedRuns = runs+sp.runs, plannedRuns+sp.plannedRuns
		perRun = perRun && sp.runs > 0 && sp.plannedRuns > 0
	}
	scale := 1.0
	switch {
	case len(ran) == 0 || plan <= 0:
	case perRun:
		scale = (wall / float64(runs)) / (plan / float64(plannedRuns))
	default:
		scale = wall / plan
	}
	return max(scale, 1)
}

// StepGroups are the names `benchnet qa --steps` takes: each is the QA
// steps of one scenario.
var StepGroups = []string{"saturation", "steady", "latency-emulation", "rotate"}

// stepGroup is the group of a step name.
func stepGroup(name string) string {
	for _, g := range StepGroups {
		if name == g || strings.HasPrefix(name, g+"-") {
			return g
		}
	}
	return name
}

// CheckStepGroups names an unknown group (field "--steps") and adds
// saturation when missing: it chooses the load of the others.
func CheckStepGroups(groups []string) ([]string, error) {
	for _, g := range groups {
		if !slices.Contains(StepGroups, g) {
			return nil, fmt.Errorf("--steps: %q: want some of %s", g, strings.Join(StepGroups, ", "))
		}
	}
	if len(groups) > 0 && !slices.Contains(groups, "saturation") {
		groups = append([]string{"saturation"}, groups...)
	}
	return groups, nil
}

// OnlySteps keeps the steps (or planned steps) of the given groups; none
// given keeps all. A QA of some scenarios only (a bisection's saturation
// decision) plans, budgets and judges those alone.
func OnlySteps[S any](steps []S, name func(S) string, groups []string) []S {
	if len(groups) == 0 {
		return steps
	}
	var out []S
	for _, s := range steps {
		if slices.Contains(groups, stepGroup(name(s))) {
			out = append(out, s)
		}
	}
	return out
}

// OnlyPlanned is p with the steps of the given groups alone, its runs and
// wall time summed again (its disk estimate, a peak, is kept).
func OnlyPlanned(p rundir.QAPlan, groups []string) rundir.QAPlan {
	if len(groups) == 0 {
		return p
	}
	p.Steps = OnlySteps(p.Steps, func(s rundir.QAPlannedStep) string { return s.Name }, groups)
	p.Runs, p.WallS = 0, 0
	for _, s := range p.Steps {
		p.Runs += s.Runs
		p.WallS += s.WallS
	}
	return p
}
