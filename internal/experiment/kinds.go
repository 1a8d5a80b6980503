package experiment

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
)

// NodeMetrics is what one node kind's runs expose to a comparison: the
// metrics judged, how a finished run directory gives their values (and the
// units inside a run the bootstrap redraws), and which manifest keys the
// kind's variants exist to change. Each kind registers one (cometbft in
// compare_metrics.go, gossipsub in gossip_metrics.go) and a comparison
// takes the one of its runs' kind: compare itself names no metric.
type NodeMetrics interface {
	// Metrics are the judged quantities, in the order tables list them.
	Metrics() []judge.Metric
	// ReadFigures reads one finished run directory. An error leaves the
	// run out of the verdicts (with a warning naming it).
	ReadFigures(dir string) (*RunFigures, error)
	// Unit names the units inside one run that the two-stage bootstrap
	// redraws ("block", "message").
	Unit() string
	// Resampling says, for the rule text, what is resampled how.
	Resampling() string
	// VariantKey reports whether a dotted manifest path is one a variant
	// of this kind exists to change: `compare DIR…` refuses runs whose
	// manifests differ elsewhere.
	VariantKey(path string) bool
	// VariantKeys names those keys for a message.
	VariantKeys() string
}

var nodeMetrics = map[string]NodeMetrics{}

// RegisterNodeMetrics adds a node kind's comparison metrics.
func RegisterNodeMetrics(kind string, nm NodeMetrics) {
	if _, dup := nodeMetrics[kind]; dup {
		panic("experiment: node metrics registered twice: " + kind)
	}
	nodeMetrics[kind] = nm
}

// NodeMetricsFor is kind's comparison metrics; "" is cometbft (compare.json
// written before the kind was recorded).
func NodeMetricsFor(kind string) (NodeMetrics, error) {
	if kind == "" {
		kind = manifest.KindCometBFT
	}
	nm, ok := nodeMetrics[kind]
	if !ok {
		return nil, fmt.Errorf("no comparison metrics for node kind %q", kind)
	}
	return nm, nil
}

// MetricOf finds a metric of kind by key.
func MetricOf(kind, key string) (judge.Metric, bool) {
	nm, err := NodeMetricsFor(kind)
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
	kinds := make([]string, 0, len(nodeMetrics))
	for k := range nodeMetrics {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out []string
	for _, k := range kinds {
		for _, m := range nodeMetrics[k].Metrics() {
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
	nm, err := NodeMetricsFor(kind)
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

func kindName(kind string) string {
	if kind == "" {
		return manifest.KindCometBFT
	}
	return kind
}

// KindRuleText states the verdict rule for nm's runs as the report prints it.
func KindRuleText(threshold float64, nm NodeMetrics) string {
	return fmt.Sprintf("Δ = (variant − base)/base, 95 %% CI by bootstrap (%s). "+
		"regression: worse by more than %[2]g %% with the whole CI beyond %[2]g %%; improvement: likewise better; "+
		"same: the CI within ±%[2]g %%; inconclusive: the CI straddles ±%[2]g %%, or a metric without %[3]ss has fewer than %[4]d runs per side.",
		nm.Resampling(), threshold, nm.Unit(), MinRuns)
}
