package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// thrRun is one run of an experiment whose [thresholds] the report lists.
type thrRun struct{ label, dir string }

// runsThresholdSection is the experiment-level Thresholds section (sweep,
// compare): the rule, then one row per judged run with its failed
// conditions, read from each run's results.json. Nothing when no run
// recorded thresholds. skipHarness: a run whose load generator could not
// keep up is neither pass nor fail (a sweep's cell).
func runsThresholdSection(rule string, runs []thrRun, skipHarness bool) []page.Block {
	t := page.Table{Head: []string{"run", "outcome", "failed or not measured"}}
	judged, failedRuns := 0, 0
	for _, r := range runs {
		res, err := (&rundir.Dir{Path: r.dir}).ReadResults()
		if err != nil || len(res.Thresholds) == 0 {
			continue
		}
		if skipHarness && len(res.GeneratorInvalid) > 0 {
			t.Rows = append(t.Rows, []string{r.label, "not judged", "the load generator could not keep up"})
			continue
		}
		kind, err := plan.RunKind(r.dir)
		if err != nil {
			t.Rows = append(t.Rows, []string{r.label, "not judged", err.Error()})
			continue
		}
		judged++
		failed := judge.ThresholdsFailed(res.Thresholds, kind)
		if len(failed) == 0 {
			t.Rows = append(t.Rows, []string{r.label, "pass", "—"})
			continue
		}
		failedRuns++
		t.Rows = append(t.Rows, []string{r.label, "**FAIL**", strings.Join(failed, "; ")})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	verdict := fmt.Sprintf("**PASS**: every judged run (%d) meets every threshold.", judged)
	if failedRuns > 0 {
		verdict = fmt.Sprintf("**FAIL** (exit 3): %d of %d judged runs failed a threshold.", failedRuns, judged)
	}
	return []page.Block{page.Heading{Level: 2, Text: "Thresholds", ID: "thresholds"}, page.Para{Text: verdict + " " + rule}, t}
}

// withThresholds puts section right after the document's title.
func withThresholds(blocks []page.Block, section []page.Block) []page.Block {
	if len(section) == 0 || len(blocks) == 0 {
		return blocks
	}
	out := append([]page.Block{blocks[0]}, section...)
	return append(out, blocks[1:]...)
}

func compareThresholdRuns(dir string, idx *rundir.CompareIndex) []thrRun {
	var runs []thrRun
	for _, r := range idx.Runs {
		if r.Status == rundir.RunDone && r.RunDir != "" {
			runs = append(runs, thrRun{fmt.Sprintf("%d: %s #%d", r.Order, r.Variant, r.Repeat), r.RunPath(dir)})
		}
	}
	return runs
}

func sweepThresholdRuns(dir string, x *rundir.SweepIndex) []thrRun {
	if x.Kind == "search" {
		return nil
	}
	var runs []thrRun
	for _, c := range x.Cells {
		if c.Status == rundir.CellDone && c.RunDir != "" {
			runs = append(runs, thrRun{c.ID, filepath.Join(dir, c.RunDir)})
		}
	}
	return runs
}

const (
	compareThresholdRule = "The manifest's `[thresholds]` apply to every run of every variant, per run (not to a variant's median): one failing or unmeasured threshold in any run fails the comparison."
	sweepThresholdRule   = "The manifest's `[thresholds]` are judged on each cell; a cell whose load generator could not keep up is neither pass nor fail."
)
