package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Output names of a comparison, in its directory.
const (
	CompareMarkdownFile = "compare.md"
	CompareHTMLFile     = "compare.html"
)

// RenderCompare writes compare.md, compare.html and plots/cmp_*.png into a
// compare directory from its compare.json and the run directories it names.
// Like a run's report it is a pure function of those directories: the same
// bytes on every re-render.
func RenderCompare(dir string) ([]string, error) {
	idx, err := rundir.CompareRecord.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("compare report: %w", err)
	}
	view, err := compareView(judge.NodeKind(idx.NodeKind), idx)
	if err != nil {
		return nil, fmt.Errorf("compare report: %s: %w", rundir.CompareFile, err)
	}
	var problems []string
	for _, r := range idx.Runs {
		if r.Status != rundir.RunDone {
			continue
		}
		if err := view.Add(r, r.RunPath(dir)); err != nil {
			problems = append(problems, fmt.Sprintf("run %d (%s): %v", r.Order, r.Variant, err))
		}
	}
	blocks, pngs, err := compareBlocks(idx, view, problems)
	if err != nil {
		return nil, err
	}
	blocks = withThresholds(blocks, runsThresholdSection(compareThresholdRule, compareThresholdRuns(dir, idx), false))
	return writeDoc("compare report", dir, CompareMarkdownFile, CompareHTMLFile, compareTitle(idx), blocks, pngs)
}

func compareTitle(idx *rundir.CompareIndex) string {
	return "benchnet comparison: " + idx.Name + " (" + strings.Join(idx.Variants, " vs ") + ")"
}

// CompareVerdictText is the verdict table as the terminal prints it.
func CompareVerdictText(idx *rundir.CompareIndex) string {
	t := verdictTable(idx)
	widths := make([]int, len(t.Head))
	for i, h := range t.Head {
		widths[i] = len([]rune(h))
	}
	for _, r := range t.Rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
	fmt.Fprintf(&b, "\n%s\n", compareOutcome(idx))
	return b.String()
}

func compareOutcome(idx *rundir.CompareIndex) string {
	switch {
	case idx.Config.Equivalence && len(idx.Regressions) > 0:
		return fmt.Sprintf("NOT EQUIVALENT within ±%g %% (exit %d): %s", idx.Config.Threshold, idx.ExitCode, strings.Join(idx.Regressions, ", "))
	case len(idx.Regressions) > 0:
		return fmt.Sprintf("REGRESSION (exit %d): %s", idx.ExitCode, strings.Join(idx.Regressions, ", "))
	case idx.Config.Equivalence && idx.ExitCode != 0:
		return fmt.Sprintf("not shown equivalent within ±%g %%: inconclusive (exit %d)", idx.Config.Threshold, idx.ExitCode)
	case idx.Config.Equivalence:
		return fmt.Sprintf("equivalent within ±%g %% (exit 0)", idx.Config.Threshold)
	}
	return "no regression (exit 0)"
}

// verdictWord is a judgement as the verdict table prints it; asked for
// equivalence, same is "equivalent" and a difference "not equivalent".
func verdictWord(o judge.Outcome, equivalence bool) string {
	switch {
	case o == judge.OutcomeRegression && equivalence:
		return "**NOT EQUIVALENT** (worse)"
	case o == judge.OutcomeImprovement && equivalence:
		return "**NOT EQUIVALENT** (better)"
	case o == judge.OutcomeSame && equivalence:
		return "equivalent"
	case o == judge.OutcomeRegression:
		return "**REGRESSION**"
	}
	return string(o)
}

func verdictTable(idx *rundir.CompareIndex) page.Table {
	t := page.Table{Head: []string{"variant", "metric", "base", "variant value", "Δ", "95 % CI of Δ", "basis", "verdict", "why"}}
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			m, _ := metricOf(idx.NodeKind, j.Metric)
			ci := "—"
			if j.CILo != nil && j.CIHi != nil {
				ci = "[" + cmpPct(*j.CILo) + ", " + cmpPct(*j.CIHi) + "]"
			}
			verdict := verdictWord(j.Verdict, idx.Config.Equivalence)
			why := j.Reason
			switch {
			case j.Basis == "pairs":
				// The paired rule's reason already says the pairs that
				// would decide.
			case j.RepeatsNeeded > 0 && j.Basis != "runs" && !strings.HasPrefix(j.Basis, "runs+"):
				why += fmt.Sprintf("; ~%d %s per side would decide: longer runs, or repeats", j.RepeatsNeeded, j.Basis)
			case j.RepeatsNeeded > 0:
				why += fmt.Sprintf("; ~%d repeats per side would decide", j.RepeatsNeeded)
			case j.RepeatsNeeded < 0:
				why += "; the delta sits on the threshold: more repeats cannot decide"
			}
			t.Rows = append(t.Rows, []string{vv.Variant, m.Name + " (" + m.Unit + ")", CmpNum(j.Base), CmpNum(j.Variant),
				cmpPct(j.DeltaPct), ci, fmt.Sprintf("%s %d/%d", j.Basis, j.NBase, j.NVariant), verdict, why})
		}
	}
	return t
}

func CmpNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// CmpDelta is v's change against base in %, a dash when either is missing
// or base is 0.
func CmpDelta(base, v float64, okB, okV bool) string {
	if !okB || !okV || base == 0 {
		return "—"
	}
	return cmpPct((v - base) / math.Abs(base) * 100)
}

// cmpPct writes a change in % with one decimal, never "-0.0%".
func cmpPct(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // also -0
	}
	return fmt.Sprintf("%+.1f%%", r)
}

// directionText names the metrics of idx's kind where higher is better.
func directionText(idx *rundir.CompareIndex) string {
	ms, ok := judge.MetricsOf(idx.NodeKind)
	if !ok {
		return ""
	}
	var higher []string
	for _, m := range ms {
		if m.Better == judge.HigherIsBetter {
			higher = append(higher, m.Name)
		}
	}
	switch len(higher) {
	case 0:
		return " Direction: lower is better for every metric."
	case 1:
		return " Direction: higher is better for " + higher[0] + ", lower for every other metric."
	}
	return " Direction: higher is better for " + strings.Join(higher[:len(higher)-1], ", ") + " and " + higher[len(higher)-1] + ", lower for every other metric."
}

func compareBlocks(idx *rundir.CompareIndex, view CompareView, problems []string) ([]page.Block, map[string][]byte, error) {
	var bs []page.Block
	add := func(b ...page.Block) { bs = append(bs, b...) }
	add(page.Heading{Level: 1, Text: compareTitle(idx), ID: ""})
	add(page.Heading{Level: 2, Text: "Verdicts", ID: "verdicts"})
	outcome := compareOutcome(idx)
	if len(idx.Regressions) > 0 {
		outcome = "**" + outcome + "**"
	}
	add(page.Para{Text: fmt.Sprintf("Base: **%s**. Threshold %g %%. %s", idx.Base, idx.Config.Threshold, outcome)})
	if len(idx.Verdicts) == 0 {
		add(page.NoData{Reason: "no variant was judged"})
	} else {
		add(verdictTable(idx))
	}
	add(page.Para{Text: "Rule: " + idx.Rule + directionText(idx)})
	if len(idx.Warnings) > 0 {
		t := page.Table{Head: []string{"warning"}}
		for _, w := range idx.Warnings {
			t.Rows = append(t.Rows, []string{w})
		}
		add(t)
	}
	add(page.Heading{Level: 2, Text: "Variants", ID: "variants"})
	add(view.Variants()...)

	pngs := map[string][]byte{}
	add(page.Heading{Level: 2, Text: "Plots", ID: "plots"})
	add(page.Para{Text: view.PlotsIntro()})
	for i, f := range view.Figures() {
		add(page.Heading{Level: 3, Text: fmt.Sprintf("%d. %s", i+1, f.Title), ID: ""})
		img, reason, err := f.Build()
		if err != nil {
			return nil, nil, fmt.Errorf("compare report: plot %s: %w", f.Name, err)
		}
		if img == nil {
			add(page.NoData{Reason: reason})
			continue
		}
		file := f.Name + ".png"
		pngs[file] = img
		add(page.Image{Alt: f.Title, File: page.PlotsDir + "/" + file, PNG: img})
		add(page.Para{Text: f.What})
	}

	add(page.Heading{Level: 2, Text: "Runs", ID: "runs"})
	add(page.Para{Text: "In the order they ran: interleaved, so the drift of a shared machine spreads over every variant."})
	rt := page.Table{Head: append(append([]string{"#", "variant", "repeat", "status"}, view.RunHead()...), "run directory")}
	for _, r := range idx.Runs {
		status := r.Status
		if r.Error != "" {
			status += ": " + r.Error
		}
		row := append([]string{strconv.Itoa(r.Order), r.Variant, strconv.Itoa(r.Repeat), status}, view.RunCells(r)...)
		rt.Rows = append(rt.Rows, append(row, r.RunDir))
	}
	add(rt)
	if len(problems) > 0 {
		t := page.Table{Head: []string{"problem"}}
		for _, p := range problems {
			t.Rows = append(t.Rows, []string{p})
		}
		add(page.Heading{Level: 2, Text: "Problems reading the run directories", ID: ""}, t)
	}
	return bs, pngs, nil
}

// metricOf finds a metric of kind by key.
func metricOf(kind, key string) (judge.Metric, bool) {
	ms, _ := judge.MetricsOf(kind)
	for _, m := range ms {
		if m.Key == key {
			return m, true
		}
	}
	return judge.Metric{}, false
}
