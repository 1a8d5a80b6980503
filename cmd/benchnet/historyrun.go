package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/scenario"
)

type historyRunFlags struct {
	up       upFlags
	control  string
	repeats  int
	duration time.Duration
	resume   string
	quick    bool
	budget   time.Duration
}

func newHistoryRunCmd() *cobra.Command {
	var f historyRunFlags
	c := &cobra.Command{
		Use:   "run REF REF... [qa-manifest.toml]",
		Short: "Measure a release line in one command: each build's saturation against a control, and every build's steady test interleaved",
		Long: `history run measures a line of builds (tags, trees, file: binaries) on the
QA testbed, in three stages, each recorded in the history:

  1. the control build (--control, default the last REF) against itself: its
     saturation search (the operating point every stage uses) and A/A pairs
     (the lab's noise, recorded as calibration);
  2. each other build's paired saturation decision against the control at
     that operating point (the QA's saturation step, --baseline-from);
  3. every build's steady test at the control's steady rate, in rounds that
     run each build once, round-robin, in alternating order, so drift lands
     on every build alike; each judged against the control.

The directory DIR/<time>-release-line/ keeps release-line.json and the three
stages' directories; Ctrl-C keeps every finished stage and run, and --resume
DIR goes on. 'benchnet history' draws the series and their change points.`,
		Example: `  benchnet history run tendermint@v0.34.22 cometbft@v0.37.15 cometbft@v0.38.17 cometbft@v1.0.1
  benchnet history run cometbft@v0.38.17 ./cometbft --control cometbft@v0.38.17 --repeats 5
  benchnet history run --resume runs/20261128-170000-release-line`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReleaseLine(cmd, args, &f)
		},
	}
	f.up.register(c)
	addHistoryFlags(c)
	fl := c.Flags()
	fl.StringVar(&f.control, "control", "", "the control build, re-run beside every other (default: the last REF)")
	fl.IntVar(&f.repeats, "repeats", 3, "steady rounds (each runs every build once)")
	fl.DurationVar(&f.duration, "duration", 0, "each steady run's load (default: the QA profile's)")
	fl.StringVar(&f.resume, "resume", "", "go on with an interrupted release-line directory")
	fl.BoolVar(&f.quick, "quick", true, "the QA's quick profile for the saturation stages (--quick=false: the default profile)")
	fl.DurationVar(&f.budget, "budget", 0, "bound on each saturation QA's wall time (default: the QA's)")
	return c
}

// splitRefsManifest: the arguments are references, and a last one ending
// in .toml is the QA manifest.
func splitRefsManifest(args []string) ([]string, string) {
	if n := len(args); n > 0 && strings.HasSuffix(args[n-1], ".toml") {
		return args[:n-1], args[n-1]
	}
	return args, ""
}

func runReleaseLine(cmd *cobra.Command, args []string, f *historyRunFlags) error {
	ctx, log := cmd.Context(), os.Stderr
	var (
		st  *rundir.ReleaseLine
		dir string
		err error
	)
	if f.resume != "" {
		if len(args) > 0 || f.control != "" {
			return usageError{errors.New("--resume takes the builds and settings from DIR (release-line.json): give no REF or --control")}
		}
		dir = f.resume
		if st, err = rundir.ReleaseLineRecord.Read(dir); err != nil {
			return usageError{err}
		}
	} else {
		refs, m := splitRefsManifest(args)
		if len(refs) < 2 {
			return usageError{errors.New("give two or more builds (REF REF...)")}
		}
		for i, r := range refs {
			if err := checkRef(fmt.Sprintf("REF %d", i+1), r); err != nil {
				return err
			}
			if slices.Index(refs, r) != i {
				return usageError{fmt.Errorf("REF %d: %s is given twice", i+1, r)}
			}
		}
		control := f.control
		if control == "" {
			control = refs[len(refs)-1]
		} else if !slices.Contains(refs, control) {
			return usageError{fmt.Errorf("--control %s is not one of the builds", control)}
		}
		if f.repeats < 2 || f.repeats > 100 {
			return usageError{fmt.Errorf("--repeats: %d: want 2 to 100 (a paired verdict needs two rounds)", f.repeats)}
		}
		if m != "" {
			if m, err = filepath.Abs(m); err != nil {
				return usageError{err}
			}
		}
		start := time.Now()
		st = &rundir.ReleaseLine{SchemaVersion: rundir.ReleaseLineSchema, Refs: refs, Control: control, Manifest: m, Quick: f.quick, Repeats: f.repeats, Started: start.UTC().Format(time.RFC3339)}
		if f.duration > 0 {
			st.Duration = f.duration.String()
		}
		if err := os.MkdirAll(f.up.output, 0o755); err != nil {
			return err
		}
		if dir, err = os.MkdirTemp(f.up.output, start.UTC().Format("20060102-150405")+"-release-line-"); err != nil {
			return fmt.Errorf("create release-line directory: %w", err)
		}
		if err := rundir.ReleaseLineRecord.Write(dir, st); err != nil {
			return err
		}
	}
	fmt.Fprintf(log, "history run: %d builds, control %s\nrelease-line directory: %s\n", len(st.Refs), st.Control, dir)
	var manifestArg []string
	if st.Manifest != "" {
		manifestArg = []string{st.Manifest}
	}
	// A saturation QA of the stage's builds, resumed when it was
	// interrupted, read back when it finished.
	saturation := func(name, cand, baselineFrom string) (string, *rundir.QAIndex, error) {
		return runSaturationQA(cmd, filepath.Join(dir, name), satQA{baseline: st.Control, candidate: cand, quick: st.Quick, budget: f.budget,
			baselineFrom: baselineFrom, manifest: manifestArg})
	}

	// Stage 1: the control against itself.
	qd, x, err := saturation("control", st.Control, "")
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil || x == nil || x.Saturation == nil || x.Saturation.Rate <= 0 {
		return fmt.Errorf("the control's saturation QA (%s) found no operating point: %w", qd, err)
	}
	st.ControlQA, st.Rate = qd, x.Saturation.Rate
	if err := rundir.ReleaseLineRecord.Write(dir, st); err != nil {
		return err
	}
	// Stage 2: each other build against the control, at its point.
	if st.BuildQAs == nil {
		st.BuildQAs = map[string]string{}
	}
	for i, ref := range st.Refs {
		if ref == st.Control {
			continue
		}
		qd, _, err := saturation(fmt.Sprintf("build-%02d", i+1), ref, st.ControlQA)
		if ctx.Err() != nil {
			return errors.Join(context.Cause(ctx), rundir.ReleaseLineRecord.Write(dir, st))
		}
		if err != nil {
			fmt.Fprintf(log, "history run: %s's saturation decision: %v\n", ref, err)
		}
		st.BuildQAs[ref] = qd
		if err := rundir.ReleaseLineRecord.Write(dir, st); err != nil {
			return err
		}
	}
	// Stage 3: every build's steady test, interleaved, at the control's rate.
	root, err := releaseLineSteady(ctx, cmd, st, dir, &f.up)
	if root != "" {
		st.Steady = root
	}
	if ctx.Err() != nil {
		return errors.Join(context.Cause(ctx), rundir.ReleaseLineRecord.Write(dir, st))
	}
	st.Finished = time.Now().UTC().Format(time.RFC3339)
	if serr := rundir.ReleaseLineRecord.Write(dir, st); serr != nil {
		return errors.Join(err, serr)
	}
	fmt.Fprint(cmd.OutOrStdout(), releaseLineSummary(dir, st))
	return err
}

// releaseLineSteady runs (or finishes) the steady compare of every build.
func releaseLineSteady(ctx context.Context, cmd *cobra.Command, st *rundir.ReleaseLine, dir string, up *upFlags) (string, error) {
	var m *manifest.Manifest
	var err error
	if st.Manifest != "" {
		m, _, err = loadQAManifests([]string{st.Manifest}, nil)
	} else {
		m, _, err = loadQAManifests(nil, nil)
	}
	if err != nil {
		return "", err
	}
	if err := up.applyRunner(m); err != nil {
		return "", err
	}
	base := experiment.DefaultQA()
	if st.Quick {
		base = experiment.QuickQA()
	}
	q, err := experiment.QAFromManifest(m, base)
	if err != nil {
		return "", err
	}
	// Resolved first: the variants share m's resolved releases (a tree's
	// build is found only there), and a copy made before has none.
	if err := primeReleases(ctx, []*manifest.Manifest{m}, st.Refs...); err != nil {
		return "", err
	}
	vm, _ := experiment.WithReleases(m, st.Refs, st.Control)
	vm.Load.Rate, vm.Load.Connections = st.Rate, q.Connections
	vm.Load.Duration, vm.Load.Count = q.Duration, 0
	if st.Duration != "" {
		d, err := time.ParseDuration(st.Duration)
		if err != nil {
			return "", err
		}
		vm.Load.Duration = rundir.Duration{Duration: d}
	}
	if err := needRoot(); err != nil {
		return "", err
	}
	if err := deps.Ensure(ctx, os.Stderr, runCommands()...); err != nil {
		return "", err
	}
	cfg := &experiment.Compare{Repeats: st.Repeats, Threshold: q.Threshold, FailOn: q.FailOn, NonInferiority: true, Paired: true}
	resume := ""
	if st.Steady != "" {
		resume = st.Steady
	}
	log := os.Stderr
	root, idx, runErr := experiment.RunCompare(ctx, vm, cfg, experiment.CompareOptions{
		Output: filepath.Join(dir, "steady"), Log: log, Now: time.Now, Cooldown: 5 * time.Second, Resume: resume,
		Measure: func(ctx context.Context, vm *manifest.Manifest, runsRoot string) (string, error) {
			o := up.options()
			o.Output = runsRoot
			res, err := scenario.Steady(ctx, vm, scenario.Options{Up: o, ScrapeInterval: time.Second, Log: log, Progress: log})
			return res.RunDir, err
		},
	})
	if root == "" {
		return "", runErr
	}
	// The line measures: a build judged worse than the control is a
	// finding, not a failure; a build never measured is one.
	if un := experiment.Unmeasured(idx); len(un) > 0 && runErr == nil {
		runErr = fmt.Errorf("steady: no finished run of %s (the runs' errors: %s)", strings.Join(un, ", "), rundir.CompareRecord.Path(root))
	}
	files, rerr := report.RenderDir(root, "")
	if idx != nil {
		fmt.Fprint(cmd.OutOrStdout(), report.CompareVerdictText(idx))
	}
	printOutcome(cmd, root, files)
	finishDir(cmd, root)
	return root, errors.Join(runErr, rerr)
}

// releaseLineSummary is what the release line measured, as printed.
func releaseLineSummary(dir string, st *rundir.ReleaseLine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nrelease line: %d builds, control %s, steady rate %g tx/s per connection\n", len(st.Refs), st.Control, st.Rate)
	for _, ref := range st.Refs {
		if ref == st.Control {
			fmt.Fprintf(&b, "  %-28s control (%s)\n", ref, st.ControlQA)
			continue
		}
		line := "no decision"
		if x, err := rundir.QARecord.Read(st.BuildQAs[ref]); err == nil && x.Saturation != nil && x.Saturation.Paired != nil {
			v := x.Saturation.Paired
			line = fmt.Sprintf("capacity %s", v.Outcome)
			if v.Ratio > 0 {
				line += fmt.Sprintf(", ratio to the control %.3f", v.Ratio)
				if v.Lo > 0 {
					line += fmt.Sprintf(" [%.3f, %.3f]", v.Lo, v.Hi)
				}
			}
			if !v.Decided && v.Outcome == judge.OutcomeInconclusive {
				line += " (undecided)"
			}
		}
		fmt.Fprintf(&b, "  %-28s %s (%s)\n", ref, line, st.BuildQAs[ref])
	}
	if st.Steady != "" {
		fmt.Fprintf(&b, "  steady: %s\n", st.Steady)
	}
	fmt.Fprintf(&b, "release-line directory: %s ('benchnet history' draws the series)\n", dir)
	return b.String()
}
