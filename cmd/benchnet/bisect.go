package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/bisect"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

type bisectFlags struct {
	good, bad  string
	output     string
	resume     string
	quick      bool
	budget     time.Duration
	keepTrees  bool
	confirmMax int
}

func newBisectCmd() *cobra.Command {
	var f bisectFlags
	c := &cobra.Command{
		Use:   "bisect TREE --good REV --bad REV [qa-manifest.toml]",
		Short: "Find the commit that regressed: bisect a git range of a CometBFT tree with the QA's paired saturation decision",
		Long: `bisect finds the first commit of a range that regressed the saturation
point. TREE is a git checkout of CometBFT (or a fork); --good and --bad are
revisions, good an ancestor of bad. Along bad's first-parent line, each
decision builds a commit (a linked worktree under the bisection directory,
built through the local-tree path, content-hash cached) and runs the QA's
saturation scenario against the good revision: the good build's search finds
its operating point once (later decisions reuse it, --baseline-from), then
pairs of both builds at 1.2 x that rate, alternating order, until the paired
rule decides. A regression (more than [qa] saturation_threshold, 10 %) is
bad, same or better is good, inconclusive is skipped as git skips a commit
that does not build. When one commit is left, it is confirmed against its
parent with a QA of its own. When skips leave several commits apart, each is
decided against its own parent, newest first, and the one that regressed
against its parent is named (that decision confirms it).

It prints the first bad commit, its subject line, the measured step (the
capacity ratio commit/parent with its 95 % interval) and the QA directories
behind every decision, and keeps bisect.json and bisect.md in
DIR/<time>-bisect/. Exit 0 when the commit is found and confirmed, 4 when the
range could not be narrowed to one (skips) or the confirmation did not
decide. Ctrl-C keeps every decision; --resume DIR goes on.

Without a range of commits, 'git bisect run' with 'benchnet --exit-codes
git-bisect qa …' is the same oracle one step at a time (docs/qa.md).`,
		Example: `  benchnet bisect ~/src/cometbft --good v1.0.0 --bad v1.0.1
  benchnet bisect ./cometbft --good HEAD~16 --bad HEAD --quick
  benchnet bisect --resume runs/20261128-160000-bisect`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBisect(cmd, args, &f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.good, "good", "", "a revision without the regression (a tag, branch or commit of TREE)")
	fl.StringVar(&f.bad, "bad", "", "a revision with it, a descendant of --good")
	fl.StringVarP(&f.output, "output", "o", "runs", "root directory of the bisection directory")
	fl.StringVar(&f.resume, "resume", "", "go on with an interrupted bisection directory")
	fl.BoolVar(&f.quick, "quick", true, "each decision in the QA's quick profile (--quick=false: the default profile's longer pairs)")
	fl.DurationVar(&f.budget, "budget", 0, "bound on each decision's wall time (default: the QA's, 15m quick)")
	addHistoryFlags(c)
	fl.BoolVar(&f.keepTrees, "keep-trees", false, "keep the commits' worktrees (by default removed when the bisection ends; the built binaries stay cached)")
	return c
}

func runBisect(cmd *cobra.Command, args []string, f *bisectFlags) error {
	ctx, out, log := cmd.Context(), cmd.OutOrStdout(), os.Stderr
	var (
		st       *bisect.State
		dir      string
		manifest []string
		err      error
	)
	if f.resume != "" {
		if len(args) > 0 || f.good != "" || f.bad != "" {
			return usageError{errors.New("--resume takes the tree, range and manifest from DIR (bisect.json): give no TREE, --good or --bad")}
		}
		dir = f.resume
		if st, err = bisect.Record.Read(dir); err != nil {
			return usageError{err}
		}
		if st.Manifest != "" {
			manifest = []string{st.Manifest}
		}
	} else {
		if len(args) == 0 || f.good == "" || f.bad == "" {
			return usageError{errors.New("give TREE (a git checkout of CometBFT), --good REV and --bad REV")}
		}
		tree, err := filepath.Abs(args[0])
		if err != nil {
			return usageError{err}
		}
		commits, err := bisect.Range(ctx, tree, f.good, f.bad)
		if err != nil {
			return usageError{fmt.Errorf("bisect %s: %w", args[0], err)}
		}
		if st, err = bisect.New(tree, f.good, f.bad, commits); err != nil {
			return usageError{err}
		}
		st.Metric = "saturation"
		if len(args) == 2 {
			m, err := filepath.Abs(args[1])
			if err != nil {
				return usageError{err}
			}
			st.Manifest, manifest = m, []string{m}
		}
		start := time.Now()
		st.Started = start.UTC().Format(time.RFC3339)
		if err := os.MkdirAll(f.output, 0o755); err != nil {
			return err
		}
		if dir, err = os.MkdirTemp(f.output, start.UTC().Format("20060102-150405")+"-bisect-"); err != nil {
			return fmt.Errorf("create bisection directory: %w", err)
		}
		if err := bisect.Record.Write(dir, st); err != nil {
			return err
		}
	}
	n := len(st.Commits) - 1
	fmt.Fprintf(log, "bisect: %d commits after %s up to %s in %s; at most %d decisions without skips (confirmation included)\nbisect directory: %s\n",
		n, bisect.Short(st.Commits[0].SHA), bisect.Short(st.Commits[n].SHA), st.Tree, bisect.MaxDecisions(n), dir)

	// Each commit is a linked worktree, removed at the end (registered as
	// it is made); the builds stay in the release cache.
	var cleanups []func() error
	defer func() {
		if f.keepTrees {
			return
		}
		for _, c := range cleanups {
			if err := c(); err != nil {
				fmt.Fprintln(log, "bisect: remove worktree:", err)
			}
		}
	}()
	treeOf := func(sha string) (string, error) {
		p := filepath.Join(dir, "trees", bisect.Short(sha))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		remove, err := bisect.Worktree(ctx, st.Tree, sha, p)
		if err != nil {
			return "", err
		}
		cleanups = append(cleanups, remove)
		return p, nil
	}
	decide := func(name, base, cand, baselineFrom string, anyBaseline bool) (*rundir.QAIndex, string, error) {
		qd, x, err := runSaturationQA(cmd, filepath.Join(dir, "qa", name), satQA{baseline: base, candidate: cand, quick: f.quick, budget: f.budget,
			baselineFrom: baselineFrom, anyBaseline: anyBaseline, manifest: manifest})
		if ctx.Err() != nil {
			return nil, "", context.Cause(ctx)
		}
		return x, qd, err
	}

	goodTree, err := treeOf(st.Commits[0].SHA)
	if err != nil {
		return err
	}
	for {
		i, ok := st.Next()
		if !ok {
			break
		}
		c := &st.Commits[i]
		tree, err := treeOf(c.SHA)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "bisect: decision %d: %s %s against %s\n", st.Decisions+1, bisect.Short(c.SHA), c.Subject, bisect.Short(st.Commits[0].SHA))
		name := fmt.Sprintf("%02d-%s", st.Decisions+1, bisect.Short(c.SHA))
		x, qd, err := decide(name, goodTree, tree, st.BaselineQA, false)
		if noDecision(x) && ctx.Err() == nil {
			// The QA reached no paired verdict (a search or pairs the
			// testbed bound, a failed run): that says nothing of the
			// commit, so it is measured once more before it is skipped.
			fmt.Fprintf(log, "bisect: %s reached no decision (%v): once more\n", bisect.Short(c.SHA), err)
			x, qd, err = decide(name+"-again", goodTree, tree, st.BaselineQA, false)
		}
		if ctx.Err() != nil {
			return errors.Join(err, bisect.Record.Write(dir, st))
		}
		st.Decisions++
		c.QA = experiment.RelTo(dir, qd)
		c.Mark, c.Why = markOf(x, err)
		if x != nil && x.Saturation != nil && x.Saturation.Paired != nil {
			c.Ratio, c.Lo, c.Hi = x.Saturation.Paired.Ratio, x.Saturation.Paired.Lo, x.Saturation.Paired.Hi
		}
		if st.BaselineQA == "" && x != nil && x.Step("saturation-baseline") != nil && x.Step("saturation-baseline").Status == rundir.StepDone {
			st.BaselineQA = qd
		}
		fmt.Fprintf(out, "bisect: %s %s: %s (%s)\n", bisect.Short(c.SHA), c.Subject, c.Mark, c.Why)
		if err := bisect.Record.Write(dir, st); err != nil {
			return err
		}
	}
	// againstParent decides commit j against its parent. The parent is
	// the good revision or was judged the same as it, or skipped: the
	// good build's operating point serves its pairs too.
	againstParent := func(name string, j int) (*bisect.Confirmation, error) {
		c, parent := st.Commits[j], st.Commits[j-1]
		ptree, err := treeOf(parent.SHA)
		if err != nil {
			return nil, err
		}
		ctree, err := treeOf(c.SHA)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "bisect: %s against its parent %s\n", bisect.Short(c.SHA), bisect.Short(parent.SHA))
		x, qd, err := decide(name+"-"+bisect.Short(c.SHA), ptree, ctree, st.BaselineQA, j-1 != 0)
		if ctx.Err() != nil {
			return nil, errors.Join(err, bisect.Record.Write(dir, st))
		}
		st.Decisions++
		cf := &bisect.Confirmation{Commit: c.SHA, Parent: parent.SHA, QA: experiment.RelTo(dir, qd)}
		cf.Mark, cf.Why = markOf(x, err)
		cf.Confirmed = cf.Mark == bisect.Bad
		if x != nil && x.Saturation != nil && x.Saturation.Paired != nil {
			cf.Ratio, cf.Lo, cf.Hi = x.Saturation.Paired.Ratio, x.Saturation.Paired.Lo, x.Saturation.Paired.Hi
		}
		return cf, nil
	}
	// Skips left several commits apart: each against its own parent,
	// newest first, until one regressed against it (bisect.NextAdjacent).
	for {
		j, found := st.NextAdjacent()
		if found >= 0 {
			st.FirstBad, st.Confirm = st.Commits[found].SHA, st.AdjacentOf(found)
			break
		}
		if j < 0 {
			break
		}
		cf, err := againstParent("adjacent", j)
		if err != nil {
			return err
		}
		st.Adjacent = append(st.Adjacent, *cf)
		fmt.Fprintf(out, "bisect: %s %s against its parent: %s (%s)\n", bisect.Short(cf.Commit), st.Commits[j].Subject, cf.Mark, cf.Why)
		if err := bisect.Record.Write(dir, st); err != nil {
			return err
		}
	}
	st.Warnings = st.Inconsistent()
	first, maybe, ok := st.Culprit()
	if st.FirstBad != "" {
		first, ok = st.Index(st.FirstBad), true
	}
	if !ok {
		var names []string
		for _, j := range maybe {
			names = append(names, bisect.Short(st.Commits[j].SHA)+" "+st.Commits[j].Subject)
		}
		st.Range = names
		st.Finished = time.Now().UTC().Format(time.RFC3339)
		err := bisect.Record.Write(dir, st)
		writeBisectReport(dir, st)
		fmt.Fprintf(out, "the first bad commit is one of %d (skipped decisions left them apart, and their decisions against their parents did not name one):\n  %s\n", len(names), strings.Join(names, "\n  "))
		return errors.Join(&experiment.VerdictError{Verdict: experiment.Inconclusive, Msg: fmt.Sprintf("bisect ended with %d candidates", len(names))}, err)
	}
	culprit := st.Commits[first]
	st.FirstBad = culprit.SHA
	if (st.Confirm == nil || st.Confirm.QA == "") && first == 1 && culprit.QA != "" && culprit.Mark == bisect.Bad {
		// Its parent is the good revision, which its decision already
		// measured it against, pairs and all: the same question again
		// would only repeat it.
		st.Confirm = &bisect.Confirmation{Commit: culprit.SHA, Parent: st.Commits[0].SHA, QA: culprit.QA, Mark: culprit.Mark, Why: culprit.Why,
			Ratio: culprit.Ratio, Lo: culprit.Lo, Hi: culprit.Hi, Confirmed: true}
	}
	if st.Confirm == nil || st.Confirm.QA == "" {
		cf, err := againstParent("confirm", first)
		if err != nil {
			return err
		}
		st.Confirm = cf
	}
	st.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := bisect.Record.Write(dir, st); err != nil {
		return err
	}
	writeBisectReport(dir, st)
	fmt.Fprint(out, bisectSummary(dir, st))
	if !st.Confirm.Confirmed {
		return &experiment.VerdictError{Verdict: experiment.Inconclusive, Msg: fmt.Sprintf("%s was not confirmed against its parent: %s", bisect.Short(culprit.SHA), st.Confirm.Why)}
	}
	return nil
}

// markOf is a decision's mark from its QA: the paired saturation verdict.
func markOf(x *rundir.QAIndex, err error) (bisect.Mark, string) {
	switch {
	case x == nil || x.Saturation == nil:
		why := "no saturation decision"
		if err != nil {
			why += ": " + err.Error()
		}
		return bisect.Skip, why
	case x.Saturation.Paired == nil:
		return bisect.Skip, "no paired decision: " + x.Saturation.Why
	}
	v := x.Saturation.Paired
	why := v.Why
	switch {
	case v.Outcome == judge.OutcomeRegression:
		return bisect.Bad, why
	case v.Decided && (v.Outcome == judge.OutcomeSame || v.Outcome == judge.OutcomeImprovement):
		return bisect.Good, why
	}
	return bisect.Skip, why
}

// bisectSummary is what the bisection found, as printed.
func bisectSummary(dir string, st *bisect.State) string {
	var b strings.Builder
	i := st.Index(st.FirstBad)
	c := st.Commits[i]
	fmt.Fprintf(&b, "\nfirst bad commit: %s %s\n", c.SHA, c.Subject)
	if cf := st.Confirm; cf != nil {
		state := "confirmed"
		if !cf.Confirmed {
			state = "NOT confirmed"
		}
		iv := ""
		if cf.Lo > 0 {
			iv = fmt.Sprintf(" [%.3f, %.3f]", cf.Lo, cf.Hi)
		}
		fmt.Fprintf(&b, "  %s against its parent %s: capacity ratio %.3f%s (%s)\n", state, bisect.Short(cf.Parent), cf.Ratio, iv, cf.Why)
	}
	noun := "decisions"
	if st.Decisions == 1 {
		noun = "decision"
	}
	fmt.Fprintf(&b, "  %d %s for %d commits (at most %d without skips)\n", st.Decisions, noun, len(st.Commits)-1, bisect.MaxDecisions(len(st.Commits)-1))
	for _, w := range st.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	fmt.Fprintf(&b, "bisect directory: %s\n  %s\n  %s\n", dir, filepath.Join(dir, bisect.File), filepath.Join(dir, "bisect.md"))
	return b.String()
}

// writeBisectReport writes bisect.md: every commit, its decision and the
// QA behind it.
func writeBisectReport(dir string, st *bisect.State) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Bisection of %s..%s\n\ntree %s, metric: %s (the QA's paired saturation decision against %s)\n\n", st.Good, st.Bad, st.Tree, st.Metric, bisect.Short(st.Commits[0].SHA))
	b.WriteString("| # | commit | subject | decision | capacity ratio [95 % interval] | QA |\n|---|---|---|---|---|---|\n")
	for i, c := range st.Commits {
		mark := string(c.Mark)
		if c.Given {
			mark += " (given)"
		}
		ratio := ""
		if c.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", c.Ratio)
			if c.Lo > 0 {
				ratio += fmt.Sprintf(" [%.3f, %.3f]", c.Lo, c.Hi)
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i, bisect.Short(c.SHA), strings.ReplaceAll(c.Subject, "|", "\\|"), mark, ratio, c.QA)
	}
	if st.FirstBad != "" {
		b.WriteString("\n" + bisectSummary(dir, st))
	} else if len(st.Range) > 0 {
		fmt.Fprintf(&b, "\nThe first bad commit is one of: %s\n", strings.Join(st.Range, "; "))
	}
	os.WriteFile(filepath.Join(dir, "bisect.md"), []byte(b.String()), 0o644)
}
