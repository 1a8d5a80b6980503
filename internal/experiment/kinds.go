package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
)

// MetricOf finds a metric of kind by key.
func MetricOf(kind, key string) (judge.Metric, bool) {
	nm, err := figures.For(kind)
	if err != nil {
		return judge.Metric{}, false
	}
	ms := nm.Metrics()
	if i := slices.IndexFunc(ms, func(m judge.Metric) bool { return m.Key == key }); i >= 0 {
		return ms[i], true
	}
	return judge.Metric{}, false
}

// AllMetricKeys lists every kind's metric keys (for --fail-on before the
// kind is known), kinds in name order.
func AllMetricKeys() []string {
	var out []string
	for _, k := range figures.Kinds() {
		nm, _ := figures.For(k)
		for _, m := range nm.Metrics() {
			if !slices.Contains(out, m.Key) {
				out = append(out, m.Key)
			}
		}
	}
	return out
}

// ParseFailOn checks a --fail-on list ("tps,latency_p95"; "all" or "" =
// every metric) against every kind's metrics; CheckFailOn later holds it
// to the compared kind's.
func ParseFailOn(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil, nil
	}
	known := AllMetricKeys()
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("--fail-on: unknown metric %q (known: %s)", k, strings.Join(known, ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

// CheckFailOn refuses fail_on keys the kind does not judge.
func CheckFailOn(kind string, failOn []string) error {
	nm, err := figures.For(kind)
	if err != nil {
		return err
	}
	var keys []string
	for _, m := range nm.Metrics() {
		keys = append(keys, m.Key)
	}
	for _, k := range failOn {
		if !slices.Contains(keys, k) {
			return &RefusedError{fmt.Sprintf("--fail-on: %q is not a metric of %s runs (theirs: %s)", k, kindName(kind), strings.Join(keys, ", "))}
		}
	}
	return nil
}

func kindName(kind string) string { return judge.NodeKind(kind) }

// KindRuleText states the verdict rule for nm's runs as the report prints it.
// EquivalenceRuleText is the rule of a compare that asks "equivalent
// within ±threshold?" (compare --equivalence).
func EquivalenceRuleText(threshold float64, nm figures.NodeMetrics) string {
	return fmt.Sprintf("equivalence within ±%[2]g %%: Δ = (variant − base)/base, 95 %% CI by bootstrap (%[1]s; paired rounds: the ratio's t interval), two one-sided tests at 2.5 %% each. "+
		"equivalent: the CI within ±%[2]g %%; not equivalent (worse or better): the whole CI beyond -%[2]g %% or +%[2]g %%, which fails the comparison (exit 3); "+
		"inconclusive: the CI reaches past an end (exit 4 when no metric is not equivalent), or a metric without %[3]ss has fewer than %[4]d runs per side.",
		nm.Resampling(), threshold, nm.Unit(), MinRuns)
}

func KindRuleText(threshold float64, nm figures.NodeMetrics) string {
	return fmt.Sprintf("Δ = (variant − base)/base, 95 %% CI by bootstrap (%s). "+
		"regression: worse by more than %[2]g %% with the whole CI beyond %[2]g %%; improvement: likewise better; "+
		"same: the CI within ±%[2]g %%; inconclusive: the CI straddles ±%[2]g %%, or a metric without %[3]ss has fewer than %[4]d runs per side.",
		nm.Resampling(), threshold, nm.Unit(), MinRuns)
}
