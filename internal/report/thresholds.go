package report

import (
	"fmt"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// ThresholdSection is the manifest's [thresholds] as judged on the run
// (results.json thresholds), at the top of the report; nothing when the
// manifest had none.
func ThresholdSection(res *rundir.Results, kind string) []page.Block {
	if res == nil || len(res.Thresholds) == 0 {
		return nil
	}
	failed := judge.ThresholdsFailed(res.Thresholds, kind)
	verdict := fmt.Sprintf("**PASS**: all %d thresholds hold (exit 0).", len(res.Thresholds))
	if len(failed) > 0 {
		verdict = fmt.Sprintf("**FAIL**: %d of %d thresholds failed or could not be evaluated (exit 3).", len(failed), len(res.Thresholds))
	}
	t := page.Table{Head: []string{"metric", "condition", "run", "outcome"}}
	for _, r := range res.Thresholds {
		actual := "—"
		if r.Actual != nil {
			actual = judge.FormatThresholdValue(kind, r.Metric, *r.Actual)
		}
		out := r.Outcome
		switch r.Outcome {
		case judge.ThresholdPass:
			out = "pass"
		case judge.ThresholdFail:
			out = "**FAIL**"
		default:
			out = "**FAIL**: " + r.Outcome
		}
		t.Rows = append(t.Rows, []string{"`" + r.Metric + "`", "`" + r.Condition + "`", actual, out})
	}
	return []page.Block{page.Heading{Level: 2, Text: "Thresholds", ID: "thresholds"}, page.Para{Text: verdict}, t,
		page.Para{Text: "The manifest's `[thresholds]`, judged on this run after the analysis; a metric the run did not measure fails as \"not measured\"."}}
}
