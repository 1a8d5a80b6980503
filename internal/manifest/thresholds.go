package manifest

import (
	"sort"

	"github.com/benchnet/benchnet/internal/judge"
)

// validateThresholds checks every [thresholds] condition against the
// metrics of the testnet's node kind (judge.ThresholdMetrics).
func (m *Manifest) validateThresholds(add func(string, string, ...any)) {
	for _, key := range m.thresholdKeys() {
		if _, err := judge.ParseCondition(m.Kind(), key, m.Thresholds[key]); err != nil {
			add("thresholds."+key, "%v", err)
		}
	}
}

// thresholdKeys are the [thresholds] keys in the order the file has them.
func (m *Manifest) thresholdKeys() []string {
	keys := make([]string, 0, len(m.Thresholds))
	for k := range m.Thresholds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := m.pos.line("thresholds."+keys[i]), m.pos.line("thresholds."+keys[j])
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// ThresholdConditions returns the parsed [thresholds], in file order; nil
// when there are none. The manifest passed validation, so each parses.
func (m *Manifest) ThresholdConditions() []judge.Condition {
	var out []judge.Condition
	for _, key := range m.thresholdKeys() {
		c, err := judge.ParseCondition(m.Kind(), key, m.Thresholds[key])
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	return out
}
