package load

import (
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// TestConnMeter: the validity limits on hand-made send records. 100 txs at
// 100 tx/s (intended every 10 ms from t0 = 1 s).
func TestConnMeter(t *testing.T) {
	const t0, step = int64(time.Second), int64(10 * time.Millisecond)
	cases := []struct {
		name     string
		n        int
		lag      func(i int) int64 // actual − intended, ns
		err      func(i int) bool
		expected int
		target   float64
		achieved float64
		why      string
	}{
		{name: "on time", n: 100, lag: func(int) int64 { return 0 }, expected: 100, target: 100, achieved: 100},
		// every send 50 ms late: lag under the bound; 100 txs over 1.05 s.
		{name: "late but steady", n: 100, lag: func(int) int64 { return 50e6 }, target: 100, achieved: 100 / 1.05},
		{name: "lag beyond bound", n: 100, lag: func(i int) int64 { return int64(i) * 2e6 }, target: 100,
			achieved: 100 / 1.198, why: "send lag p99 196.0 ms > 100ms: the generator fell behind"},
		// 60 ms late at the end only: the lag p99 bound holds (the last of 100
		// is beyond p99) but 100 txs over 1.06 s is 94.3 tx/s < 95.
		{name: "slow at the end", n: 100, lag: func(i int) int64 {
			if i == 99 {
				return 60e6
			}
			return 0
		}, target: 100, achieved: 100 / 1.06, why: "achieved 94.3 tx/s < 95% of target 100.0 tx/s"},
		{name: "stopped early", n: 40, lag: func(int) int64 { return 0 }, expected: 100, target: 100, achieved: 100,
			why: "attempted 40 of 100 txs"},
		{name: "all failed", n: 10, lag: func(int) int64 { return 0 }, err: func(int) bool { return true }, target: 100, achieved: 100,
			why: "all 10 txs failed to send"},
		{name: "one tx: no rate", n: 1, lag: func(int) int64 { return 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m ConnMeter
			// completion order is not intended order: add backwards
			for i := tc.n - 1; i >= 0; i-- {
				s := rundir.Sent{Seq: uint64(i), Intended: t0 + int64(i)*step, Result: rundir.ResultOK}
				s.SentAt = s.Intended + tc.lag(i)
				if tc.err != nil && tc.err(i) {
					s.Result = rundir.ResultSendError
				}
				m.Add(&s)
			}
			cs, why := m.Summary("v0", 0, tc.expected)
			if d := cs.TargetRate - tc.target; d > 1e-6 || d < -1e-6 {
				t.Errorf("target = %v, want %v", cs.TargetRate, tc.target)
			}
			if d := cs.Achieved - tc.achieved; d > 1e-6 || d < -1e-6 {
				t.Errorf("achieved = %v, want %v", cs.Achieved, tc.achieved)
			}
			if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
		})
	}
}
