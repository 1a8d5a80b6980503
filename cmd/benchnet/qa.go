package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

// qaDefault is the built-in QA manifest.
const qaDefault = "qa.toml"

type qaFlags struct {
	baseline, candidate string
	budget              time.Duration
	quick, grid         bool
	judgeLE             bool
	resume              string
	baselineFrom        string
	junit               string
	planOnly            bool
	keepHomes           bool
	scrape              time.Duration
	steps               []string
	anyBaseline         bool
}

func newQACmd() *cobra.Command {
	var (
		f  qaFlags
		up upFlags
	)
	c := &cobra.Command{
		Use:   "qa --baseline REF --candidate REF [qa-manifest.toml]",
		Short: "Run the release QA method (saturation, steady, latency emulation, rotating nodes) and end in Pass, Fail or Inconclusive",
		Long: `qa runs the CometBFT release QA method on this machine in one command:

  1. the saturation point of each build (a search, or --grid), the chosen
     load being the baseline's saturation backed off by a stated margin, and
     the candidate's saturation judged against the baseline's;
  2. a steady test at that load, baseline and candidate interleaved, with
     repeats added while a judged metric is inconclusive (up to a maximum,
     within the budget less the planned time of the steps after it);
  3. the same with latency emulation (the AWS zone table, random zones from
     the seed), reported beside it and judged only with --judge-le;
  4. rotating nodes on a second testbed, per build: every cycle must catch up
     within its timeout; catch-up time is judged against the baseline.

It prints the plan first (steps, runs, estimated wall time from the capacity
model, disk needed) and refuses a QA that cannot fit the free disk or the
--budget. Each step is an ordinary experiment directory under
DIR/<time>-<name>-qa/steps/; qa.json indexes them, qa.md and a self-contained
qa.html report them ('benchnet report DIR' re-renders). Ctrl-C keeps every
finished step; --resume DIR finishes the rest.

The result is the worst of the judged scenarios' results: exit 0 Pass,
3 Fail, 4 Inconclusive. --junit FILE writes the verdicts as JUnit XML.

The QA manifest is an ordinary manifest (the steady testbed) with a [qa]
table; its 'rotate' key names the rotating testbed's manifest. The
built-in one is examples/qa.toml.`,
		Example: `  benchnet qa --baseline cometbft@v0.38.17 --candidate cometbft@v1.0.1
  benchnet qa --baseline cometbft@v1.0.1 --candidate cometbft@v1.0.1 --quick --junit qa.xml
  benchnet qa --baseline cometbft@v0.38.17 --candidate cometbft@v1.0.1 --plan
  benchnet qa --resume runs/20261124-080000-qa-qa`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQA(cmd, args, &f, &up)
		},
	}
	up.register(c)
	addHistoryFlags(c)
	fl := c.Flags()
	fl.StringVar(&f.baseline, "baseline", "", "the baseline build's release reference: NAME@vX.Y.Z, NAME@COMMIT, a source tree (./dir) or file:/path/to/binary")
	fl.StringVar(&f.candidate, "candidate", "", "the candidate build's release reference")
	fl.DurationVar(&f.budget, "budget", 60*time.Minute, "bound on the QA's wall time: the plan is trimmed (stated) or refused past it; adaptive repeats stop in time for the steps after them (--quick: 15m unless given)")
	fl.BoolVar(&f.quick, "quick", false, "the short profile (fewer cycles, shorter runs, a coarser search): smoke tests and CI")
	fl.BoolVar(&f.grid, "grid", false, "measure the saturation with the QA's c x r grid ([qa] rates) instead of a search")
	fl.BoolVar(&f.judgeLE, "judge-le", false, "judge the latency-emulation runs too (default: reported only)")
	fl.StringVar(&f.resume, "resume", "", "finish the unfinished steps of an interrupted QA directory")
	fl.StringVar(&f.baselineFrom, "baseline-from", "", "reuse an earlier QA directory's baseline saturation and rotating runs (same testbed, method and baseline)")
	fl.StringVar(&f.junit, "junit", "", "write the verdicts as JUnit XML to FILE")
	fl.BoolVar(&f.planOnly, "plan", false, "print the plan and stop")
	fl.BoolVar(&f.keepHomes, "keep-homes", false, "keep the node homes (chain stores) of finished steps; by default they are removed once a step is done")
	fl.DurationVar(&f.scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	fl.StringSliceVar(&f.steps, "steps", nil, "run these scenarios only: "+strings.Join(experiment.StepGroups, ", ")+" (default all; saturation always runs: it chooses the others' load)")
	// bisect's confirmation: the parent at the good build's operating point.
	fl.BoolVar(&f.anyBaseline, "baseline-from-any", false, "with --baseline-from, reuse its saturation search although its baseline is another build (said in the report)")
	_ = fl.MarkHidden("baseline-from-any")
	return c
}

// checkRef accepts a release reference (internal/release's grammar),
// naming the flag when it cannot.
func checkRef(flag, ref string) error {
	if ref == "" {
		return usageError{fmt.Errorf("--%s: give a release reference, e.g. cometbft@v1.0.1 (%s)", flag, release.Grammar)}
	}
	if _, err := release.Parse(ref); err != nil {
		return usageError{fmt.Errorf("--%s: %w", flag, err)}
	}
	return nil
}

// resolveBuild checks a reference against the world before anything
// starts (a tag on the proxy, a tree that builds, a binary that runs) and
// returns it as the manifests will carry it (a path made absolute: the
// variants' manifests live elsewhere) with what the Version column shows.
func resolveBuild(ctx context.Context, flag, ref string) (rundir.QABuild, error) {
	cwd, _ := os.Getwd()
	res, err := release.Resolve(ctx, ref, cwd)
	if err != nil {
		return rundir.QABuild{}, usageError{fmt.Errorf("--%s: %w", flag, err)}
	}
	b := rundir.QABuild{Ref: ref}
	switch res.Ref.Kind {
	case release.Tree:
		b.Ref = filepath.Join(cwd, res.Ref.Path)
		if filepath.IsAbs(res.Ref.Path) {
			b.Ref = filepath.Clean(res.Ref.Path)
		}
	case release.File:
		p := res.Ref.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		b.Ref = "file:" + p
	}
	for _, l := range res.Info {
		k, v, _ := strings.Cut(l, ": ")
		switch k {
		case "vcs.revision", "sha256":
			b.Commit = v
		case "vcs.dirty":
			if v == "true" {
				b.Commit += "+dirty"
			}
		case "version":
			if b.Commit == "" && v != res.Ref.Version {
				b.Commit = v
			}
		}
	}
	return b, nil
}

// loadQAManifests reads the QA manifest (given, or the built-in) and the
// rotating testbed it names.
func loadQAManifests(args []string, q *experiment.QA) (*manifest.Manifest, *manifest.Manifest, error) {
	var m *manifest.Manifest
	var err error
	builtin := len(args) == 0
	if builtin {
		data, rerr := examples.FS.ReadFile(qaDefault)
		if rerr != nil {
			return nil, nil, fmt.Errorf("built-in QA manifest: %w", rerr)
		}
		m, err = manifest.Parse(path.Join("examples", qaDefault), data)
	} else {
		m, err = manifest.LoadFile(args[0])
	}
	if err != nil {
		return nil, nil, err
	}
	if q == nil || q.Rotate == "" {
		return m, nil, nil
	}
	var rm *manifest.Manifest
	rel := q.Rotate
	if builtin {
		data, rerr := examples.FS.ReadFile(rel)
		if rerr != nil {
			return nil, nil, manifest.Errors{m.Errorf("qa.rotate", "%q: no such built-in manifest", rel)}
		}
		rm, err = manifest.Parse(path.Join("examples", rel), data)
	} else {
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(args[0]), rel)
		}
		rm, err = manifest.LoadFile(p)
	}
	if err != nil {
		return nil, nil, err
	}
	if rm.Rotate == nil {
		return nil, nil, manifest.Errors{m.Errorf("qa.rotate", "%s has no [rotate] table", rm.File)}
	}
	return m, rm, nil
}

func runQA(cmd *cobra.Command, args []string, f *qaFlags, up *upFlags) error {
	log := os.Stderr
	var (
		x      *rundir.QAIndex
		q      *experiment.QA
		m, rm  *manifest.Manifest
		root   string
		err    error
		resume = f.resume != ""
	)
	if resume {
		if len(args) > 0 || cmd.Flags().Changed("baseline") || cmd.Flags().Changed("candidate") || f.quick || f.grid || f.baselineFrom != "" || len(f.steps) > 0 {
			return usageError{errors.New("--resume takes the builds, manifests and settings from DIR (qa.json): give no manifest, --baseline, --candidate, --quick, --grid, --baseline-from or --steps")}
		}
		root = f.resume
		r, err := experiment.ReadQARun(root)
		if err != nil {
			return usage(err)
		}
		x, q, m, rm = r.Index, r.Config, r.Manifest, r.Rotate
		if !cmd.Flags().Changed("budget") && x.Plan.BudgetS > 0 {
			f.budget = time.Duration(x.Plan.BudgetS * float64(time.Second)) // the QA's own
		}
	} else {
		if err := checkRef("baseline", f.baseline); err != nil {
			return err
		}
		if f.steps, err = experiment.CheckStepGroups(f.steps); err != nil {
			return usageError{err}
		}
		if err := checkRef("candidate", f.candidate); err != nil {
			return err
		}
		// The profile, then the manifest's [qa] table over it (a test's
		// manifest may shorten the quick profile further).
		base, profile := experiment.DefaultQA(), "default"
		if f.quick {
			base, profile = experiment.QuickQA(), "quick"
			if !cmd.Flags().Changed("budget") {
				f.budget = QuickBudget
			}
		}
		if m, _, err = loadQAManifests(args, nil); err != nil {
			return err
		}
		if q, err = experiment.QAFromManifest(m, base); err != nil {
			return err
		}
		if f.grid {
			q.Grid = true
			if len(q.Rates) == 0 {
				q.Rates = []float64{200, 400, 600, 800, 1000}
			}
		}
		if f.judgeLE {
			q.JudgeLE, q.LE = true, true // --quick leaves it out unless judged
		}
		if errs := q.Validate(); len(errs) > 0 {
			return usageError{fmt.Errorf("qa settings: %w", errors.Join(errs...))}
		}
		if m, rm, err = loadQAManifests(args, q); err != nil {
			return err
		}
		// --runner holds for both testbeds: the rotating one too.
		for _, mm := range []*manifest.Manifest{m, rm} {
			if mm == nil {
				continue
			}
			if err := up.applyRunner(mm); err != nil {
				return err
			}
		}
		mach := collect.ReadMachine()
		bb, err := resolveBuild(cmd.Context(), "baseline", f.baseline)
		if err != nil {
			return err
		}
		cb, err := resolveBuild(cmd.Context(), "candidate", f.candidate)
		if err != nil {
			return err
		}
		x = &rundir.QAIndex{SchemaVersion: rundir.QASchema, Kind: "qa", Name: m.Name,
			Baseline: bb, Candidate: cb,
			Manifest: m.File, Profile: profile, Config: q.ConfigJSON(), Machine: &mach,
			Steps: experiment.OnlySteps(experiment.QASteps(q, rm != nil), func(s rundir.QAStep) string { return s.Name }, f.steps)}
	}

	// Every release reference the steps' manifests will carry is checked
	// once here (a tree's hash, a binary's version): the variants share
	// the maps, so a build's testnets resolve it without IO.
	if err := primeReleases(cmd.Context(), []*manifest.Manifest{m, rm}, x.Baseline.Ref, x.Candidate.Ref); err != nil {
		return err
	}

	// The plan: steps, runs, wall time, disk; refused past the free disk
	// or the budget (trimmed first, with the reason stated).
	cost, err := qaCost(m, rm)
	if err != nil {
		return usageError{err}
	}
	outRoot := up.output
	if resume {
		outRoot = root
	}
	withBaseline := f.baselineFrom == ""
	planOf := func(qq *experiment.QA) rundir.QAPlan {
		return experiment.OnlyPlanned(experiment.PlanQA(qq, cost, qq.Connections, withBaseline, f.keepHomes), f.steps)
	}
	var notes []string
	if !resume {
		notes = experiment.TrimToBudget(q, planOf, f.budget)
		x.Config = q.ConfigJSON()
	}
	p := planOf(q)
	p.Notes = append(p.Notes, notes...)
	p.BudgetS = f.budget.Seconds()
	p.FreeBytes = freeBytes(outRoot)
	if cost.Note != "" {
		p.Notes = append([]string{cost.Note}, p.Notes...)
	}
	if !resume && !q.Grid {
		raw := [][]byte{m.Raw}
		if rm != nil {
			raw = append(raw, rm.Raw)
		}
		p.Notes = append(p.Notes, applyCalibration(x, q, raw))
	}
	if !resume {
		x.Plan = p
	}
	fmt.Fprint(log, qaPlanText(x, p))
	if err := experiment.PlanRefusal(p, f.quick); err != nil && !resume {
		return usageError{err}
	}
	if f.planOnly {
		return nil
	}
	if err := needRoot(); err != nil {
		return err
	}
	if err := deps.Ensure(cmd.Context(), log, runCommands()...); err != nil {
		return err
	}
	start := time.Now()
	// The budget bounds the whole QA: a resumed one has spent part of it.
	env := experiment.Env{Output: up.output, Log: log, Cooldown: 5 * time.Second, Deadline: start.Add(f.budget),
		Lab: &experiment.LiveLab{Up: up.options(), Scrape: f.scrape, Log: log, Progress: log}}
	if resume {
		spent := experiment.BudgetSpent(x)
		env.Resume, env.Deadline = root, start.Add(max(0, f.budget-spent))
		fmt.Fprintf(log, "qa: resumed: the finished steps took %s of the %s budget; adaptive repeats stop by %s\n",
			spent.Round(time.Second), f.budget, env.Deadline.Local().Format("15:04:05"))
	}
	run := &experiment.QARun{Index: x, Config: q, Manifest: m, Rotate: rm, KeepHomes: f.keepHomes,
		BaselineFrom: f.baselineFrom, AnyBaseline: f.anyBaseline}
	ex, err := run.NewExecutor(env)
	if err != nil {
		return usage(err)
	}
	res, runErr := ex.Run(cmd.Context())
	if res.Dir == "" {
		return runErr
	}
	if runErr == nil {
		recordAA(res.Dir, x, log)
	}
	return finishQA(cmd, res, x, f.junit, time.Since(start), runErr)
}

// QuickBudget is --quick's default budget: the quick profile's promise.
const QuickBudget = 15 * time.Minute

// finishQA renders the report, prints the Test Results, writes JUnit and
// returns the verdict (its exit code) joined with what failed.
func finishQA(cmd *cobra.Command, res experiment.Result, x *rundir.QAIndex, junit string, wall time.Duration, runErr error) error {
	root, out := res.Dir, cmd.OutOrStdout()
	files, rerr := report.RenderQA(root)
	fmt.Fprintln(out)
	fmt.Fprint(out, report.QAResultsText(x))
	fmt.Fprintf(out, "wall time: %s\n", wall.Round(time.Second))
	fmt.Fprintf(out, "qa directory: %s\n", root)
	for _, p := range files {
		fmt.Fprintf(out, "  %s\n", p)
	}
	if junit != "" {
		data, err := report.QAJUnit(root)
		if err == nil {
			err = os.WriteFile(junit, data, 0o644)
		}
		if err != nil {
			rerr = errors.Join(rerr, fmt.Errorf("--junit %s: %w", junit, err))
		}
	}
	finishDir(cmd, root)
	if runErr != nil && !x.Complete {
		fmt.Fprintf(os.Stderr, "qa not finished: 'benchnet qa --resume %s' runs the remaining steps\n", root)
	}
	if err := errors.Join(runErr, rerr); err != nil && cmd.Context().Err() != nil {
		return err
	}
	if verdict := res.Err(); verdict != nil {
		// A step that failed made its scenario Inconclusive: the verdict
		// is the exit code, the failure a line on stderr.
		if runErr != nil {
			fmt.Fprintf(os.Stderr, "qa: %v\n", runErr)
		}
		return errors.Join(verdict, rerr)
	}
	return errors.Join(rerr, runErr)
}

// primeReleases checks each manifest's own references and adds the two
// builds' to its resolved releases (shared with every variant made from it).
func primeReleases(ctx context.Context, ms []*manifest.Manifest, refs ...string) error {
	for _, m := range ms {
		if m == nil {
			continue
		}
		if err := m.CheckReleases(ctx); err != nil {
			return err
		}
		for _, ref := range refs {
			if _, ok := m.Releases[ref]; ok {
				continue
			}
			res, err := release.Resolve(ctx, ref, "")
			if err != nil {
				return usageError{fmt.Errorf("%s: %w", ref, err)}
			}
			m.Releases[ref], m.ReleaseInfo[ref] = res.Release, res.Info
		}
	}
	return nil
}

// qaCost is the plan's cost model: the testbeds' sizes and the block rate
// the capacity model predicts for the steady testbed on this machine.
func qaCost(m, rm *manifest.Manifest) (experiment.QACost, error) {
	c := experiment.QACost{TxBytes: m.Load.Size, Warmup: m.Load.Warmup.Duration, Grace: m.Load.Grace.Duration}
	p, err := plan.Resolve(m)
	if err != nil {
		return c, err
	}
	c.Nodes = len(p.Nodes)
	if mach, err := capacity.ThisMachine(); err == nil {
		e := capacity.Need(p, m.Infra.Runner).Fit(mach)
		c.BlockRate = e.Rate
		c.Note = fmt.Sprintf("capacity (steady testbed): %s; this machine: %d cores, %d MiB available", e, mach.Cores, mach.MemAvail>>20)
	}
	if r, _ := caps.Of(m.Infra.Runner); r.TestnetS > 0 {
		// A runner whose testnets take long to come up (swarm) makes
		// every run of a QA longer: the plan says so before it runs.
		c.RunnerS = r.TestnetS
		note := fmt.Sprintf("runner %s: each run's testnet up and down takes ~%.0f s more than on local (measured)", m.Infra.Runner, r.TestnetS)
		if c.Note != "" {
			note = c.Note + "; " + note
		}
		c.Note = note
	}
	if rm != nil {
		rp, err := plan.Resolve(rm)
		if err != nil {
			return c, err
		}
		c.RotateNodes = len(rp.Nodes)
	}
	if c.TxBytes <= 0 {
		c.TxBytes = 1024
	}
	return c, nil
}

// freeBytes is the space available to an unprivileged writer under dir.
// dir may not exist yet: its nearest existing parent's file system counts.
func freeBytes(dir string) int64 {
	d, _ := filepath.Abs(dir)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return 0
		}
		d = parent
	}
}

func qaPlanText(x *rundir.QAIndex, p rundir.QAPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "qa plan: %s against %s (%s profile)\n", x.Candidate.Ref, x.Baseline.Ref, x.Profile)
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "  %d. %-20s %3d runs  ~%-8s %6d MiB  %s\n", i+1, s.Name, s.Runs, time.Duration(s.WallS)*time.Second, s.DiskBytes>>20, s.What)
	}
	fmt.Fprintf(&b, "  total: %d runs, ~%s (budget %s), %d MiB of disk (%d MiB free)\n", p.Runs, time.Duration(p.WallS)*time.Second,
		time.Duration(p.BudgetS)*time.Second, p.DiskBytes>>20, p.FreeBytes>>20)
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
