package experiment

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// nextRound decides whether an adaptive round runs after rounds rounds,
// and says why (the reason is kept as the comparison's stop reason).
func nextRound(root string, idx *rundir.CompareIndex, rounds int, roundTime time.Duration, env Env) (bool, string) {
	cfg := idx.Config
	if cfg.MaxRepeats <= cfg.Repeats {
		return false, fmt.Sprintf("the planned %d repeats per variant ran", rounds)
	}
	if err := JudgeCompare(root, idx); err != nil {
		return false, "judging failed: " + err.Error()
	}
	var open []string
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			if j.Verdict == judge.OutcomeInconclusive && (len(cfg.FailOn) == 0 || slices.Contains(cfg.FailOn, j.Metric)) {
				open = append(open, vv.Variant+": "+j.Metric)
			}
		}
	}
	switch {
	case len(open) == 0:
		return false, fmt.Sprintf("decided after %d repeats per variant: no judged metric inconclusive", rounds)
	case rounds >= cfg.MaxRepeats:
		return false, fmt.Sprintf("maximum of %d repeats per variant reached with %d metric(s) inconclusive (%s)", cfg.MaxRepeats, len(open), strings.Join(open, ", "))
	case !env.Deadline.IsZero() && env.now().Add(roundTime).After(env.Deadline):
		return false, fmt.Sprintf("budget: another round (~%s) would end past the deadline, with %d metric(s) inconclusive (%s)", roundTime.Round(time.Second), len(open), strings.Join(open, ", "))
	}
	return true, fmt.Sprintf("%d metric(s) inconclusive (%s)", len(open), strings.Join(open, ", "))
}
