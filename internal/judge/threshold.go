package judge

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A threshold is one `[thresholds]` condition of a manifest: a metric key,
// an operator and a value ("latency_p99 = \"< 2s\""). It is judged on one
// run's figures after analysis; a failed one makes the run's exit code 3.

// ThresholdMetrics is every metric a [thresholds] key may name for a node
// kind: the kind's judged metrics (the keys of compare --fail-on) and its
// threshold-only keys (outcomes of faults, shares of the accounting).
func ThresholdMetrics(kind string) []Metric {
	km, ok := kindMetrics(kind)
	if !ok {
		return nil
	}
	return append(slices.Clone(km.Judged), km.ThresholdOnly...)
}

// Condition is one parsed threshold.
type Condition struct {
	Metric string
	Op     string
	Value  float64 // in the metric's unit (ms, %, tx/s, 0/1 for bool)
	Text   string  // operator and value as written, spaced: "< 2s"
}

// thresholdOps, longest first so "<=" is not read as "<".
var thresholdOps = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseCondition reads text ("< 2s", ">= 99.9%", "== 1", "== true") as a
// condition on metric key of kind. Values: durations for the ms metrics,
// a percentage or a fraction (0..1) for the % metrics, true/false (or 1/0)
// for the outcome metrics, plain numbers otherwise.
func ParseCondition(kind, key, text string) (Condition, error) {
	ms := ThresholdMetrics(kind)
	if len(ms) == 0 {
		return Condition{}, fmt.Errorf("no metrics for %s nodes in this binary (have %v; import internal/kinds)", NodeKind(kind), kinds.Names())
	}
	i := slices.IndexFunc(ms, func(m Metric) bool { return m.Key == key })
	if i < 0 {
		keys := make([]string, len(ms))
		for j, m := range ms {
			keys[j] = m.Key
		}
		return Condition{}, fmt.Errorf("unknown metric for %s nodes: want one of %s", NodeKind(kind), strings.Join(keys, ", "))
	}
	m := ms[i]
	s := strings.TrimSpace(text)
	op := ""
	for _, o := range thresholdOps {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	if op == "" {
		return Condition{}, fmt.Errorf("%q: want an operator (<, <=, >, >=, ==, !=) and a value, e.g. \"< 2s\"", text)
	}
	raw := strings.TrimSpace(s[len(op):])
	if raw == "" {
		return Condition{}, fmt.Errorf("%q: no value after %q", text, op)
	}
	v, err := parseThresholdValue(m, raw)
	if err != nil {
		return Condition{}, fmt.Errorf("%q: %v", text, err)
	}
	if m.Unit == "bool" && op != "==" && op != "!=" {
		return Condition{}, fmt.Errorf("%q: %s is an outcome (true/false): use == or !=", text, key)
	}
	if m.Unit == "%" && (v < 0 || v > 100) {
		return Condition{}, fmt.Errorf("%q: a share is between 0 and 100%% (or 0 and 1)", text)
	}
	if v < 0 {
		return Condition{}, fmt.Errorf("%q: %s cannot be negative", text, key)
	}
	return Condition{Metric: key, Op: op, Value: v, Text: op + " " + raw}, nil
}

func parseThresholdValue(m Metric, raw string) (float64, error) {
	switch m.Unit {
	case "ms":
		d, err := time.ParseDuration(raw)
		if err != nil {
			return 0, fmt.Errorf("%s is a time: want a duration such as \"2s\" or \"850ms\"", m.Key)
		}
		return float64(d) / float64(time.Millisecond), nil
	case "%":
		if p, ok := strings.CutSuffix(raw, "%"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s is a share: want a percentage such as \"99.9%%\" or a fraction such as 0.999", m.Key)
			}
			return v, nil
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is a share: want a percentage such as \"99.9%%\" or a fraction such as 0.999", m.Key)
		}
		if v > 1 {
			return 0, fmt.Errorf("%s is a share: a plain number is a fraction (0 to 1); write %g%% for a percentage", m.Key, v)
		}
		return 100 * v, nil
	case "bool":
		switch raw {
		case "true", "1":
			return 1, nil
		case "false", "0":
			return 0, nil
		}
		return 0, fmt.Errorf("%s is an outcome: want true or false", m.Key)
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if _, derr := time.ParseDuration(raw); derr == nil {
			return 0, fmt.Errorf("%s is in %s, not a time: want a plain number", m.Key, m.Unit)
		}
		return 0, fmt.Errorf("%s: want a plain number (%s)", m.Key, m.Unit)
	}
	return v, nil
}

// Threshold outcomes.
const (
	ThresholdPass    = "pass"
	ThresholdFail    = "fail"
	ThresholdMissing = "not measured" // the run has no value for the metric: a failure to evaluate
)

// ThresholdResult is one condition judged on one run.
type ThresholdResult struct {
	Metric string `json:"metric"`
	// Condition is the operator and value as written ("< 2s"); Value the
	// value in the metric's unit.
	Condition string  `json:"condition"`
	Op        string  `json:"op"`
	Value     float64 `json:"value"`
	// Actual is the run's value (in the metric's unit); absent when the
	// metric was not measured.
	Actual  *float64 `json:"actual,omitempty"`
	Outcome string   `json:"outcome"`
}

// Failed reports whether the result fails the run (a missing value does).
func (r ThresholdResult) Failed() bool { return r.Outcome != ThresholdPass }

// Holds evaluates the condition on v.
func (c Condition) Holds(v float64) bool {
	const eps = 1e-9
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value+eps
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value-eps
	case "==":
		return math.Abs(v-c.Value) <= eps*math.Max(1, math.Abs(c.Value))
	case "!=":
		return math.Abs(v-c.Value) > eps*math.Max(1, math.Abs(c.Value))
	}
	return false
}

// EvalThresholds judges every condition on a run's values (metric key ->
// value in the metric's unit; a metric the run did not measure is absent).
func EvalThresholds(conds []Condition, values map[string]float64) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(conds))
	for _, c := range conds {
		r := ThresholdResult{Metric: c.Metric, Condition: c.Text, Op: c.Op, Value: c.Value, Outcome: ThresholdMissing}
		if v, ok := values[c.Metric]; ok {
			r.Actual = &v
			r.Outcome = ThresholdFail
			if c.Holds(v) {
				r.Outcome = ThresholdPass
			}
		}
		out = append(out, r)
	}
	return out
}

// ThresholdsFailed lists "metric condition (actual)" for every failed or
// unevaluated result, for an error message; nil when all pass.
func ThresholdsFailed(rs []ThresholdResult, kind string) []string {
	var out []string
	for _, r := range rs {
		if !r.Failed() {
			continue
		}
		if r.Actual == nil {
			out = append(out, fmt.Sprintf("%s %s: not measured", r.Metric, r.Condition))
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: was %s", r.Metric, r.Condition, FormatThresholdValue(kind, r.Metric, *r.Actual)))
	}
	return out
}

// FormatThresholdValue prints v in the unit the metric is thresholded in.
func FormatThresholdValue(kind, key string, v float64) string {
	ms := ThresholdMetrics(kind)
	i := slices.IndexFunc(ms, func(m Metric) bool { return m.Key == key })
	unit := ""
	if i >= 0 {
		unit = ms[i].Unit
	}
	switch unit {
	case "ms":
		d := time.Duration(math.Round(v * float64(time.Millisecond)))
		if v >= 1 {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(time.Microsecond).String()
	case "%":
		return strconv.FormatFloat(v, 'g', 6, 64) + "%"
	case "bool":
		if v != 0 {
			return "true"
		}
		return "false"
	case "":
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64) + " " + unit
}
