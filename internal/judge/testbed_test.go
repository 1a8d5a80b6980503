package judge

import (
	"strings"
	"testing"
)

// TestTestbedBoundProbe: a testbed-bound repeat is left out of a probe's
// decision; a probe with only such repeats is TestbedBound (never
// saturated), repeated, and after MaxRepeats + TestbedRetries ends the
// search inconclusive.
// The case seen: another job loaded the machine and a probe committed 0 of
// 2000 txs; it was judged saturated and the search moved on.
func TestTestbedBoundProbe(t *testing.T) {
	r := DefaultRule()
	s := Search{Start: 100, MinRate: 10, MaxRate: 1000, Precision: 0.05, Clear: 0.05, MinRepeats: 2, MaxRepeats: 3, Budget: 20}
	ok := func(rate float64) Cell {
		return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 2000, Committed: 2000, TPS: rate, P50Ms: 1000, LoadValid: true}
	}
	broken := func(rate float64) Cell {
		return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 2000, Committed: 0, LoadValid: true,
			Testbed: []string{"the chain committed none of the 2000 txs sent: a broken run, not a measurement", "load from outside the run: 1.80 cores"}}
	}
	hogged := func(rate float64) Cell {
		c := ok(rate)
		c.Committed, c.P50Ms = 1500, 9000 // would be saturated
		c.Testbed = []string{"load from outside the run: 1.60 cores"}
		return c
	}
	for _, c := range []struct {
		name     string
		runs     []Cell
		decision Decision // of the last probe
		next     float64
		done     bool
		detail   string
	}{
		{name: "a chain that committed nothing is not saturated: the probe repeats",
			runs: []Cell{ok(100), broken(200)}, decision: TestbedBound, next: 200},
		{name: "a hogged run that looks saturated is left out",
			runs: []Cell{ok(100), hogged(200)}, decision: TestbedBound, next: 200},
		{name: "a valid repeat after a testbed-bound one decides alone (clear)",
			runs: []Cell{ok(100), broken(200), ok(200)}, decision: Below, next: 400},
		{name: "testbed-bound in its MaxRepeats: repeated TestbedRetries more",
			runs: []Cell{ok(100), broken(200), hogged(200), broken(200)}, decision: TestbedBound, next: 200},
		{name: "testbed-bound in every repeat allowed: inconclusive, named",
			runs: []Cell{ok(100), broken(200), hogged(200), broken(200), hogged(200), broken(200)}, decision: TestbedBound, done: true,
			detail: "at 200 tx/s per connection testbed-bound in all 5 repeat(s): the chain committed none"},
		{name: "the budget ends it too",
			runs: []Cell{ok(100), broken(200)}, decision: TestbedBound, done: true, detail: "budget of 2 runs spent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss := s
			if strings.Contains(c.name, "budget") {
				ss.Budget = 2
			}
			st := ss.Step(r, c.runs)
			last := st.Probes[len(st.Probes)-1]
			if last.Decision != c.decision {
				t.Fatalf("last probe %+v, want %s", last, c.decision)
			}
			if st.Done != c.done || st.Next != c.next {
				t.Fatalf("state done %v next %g (%s), want done %v next %g", st.Done, st.Next, st.Detail, c.done, c.next)
			}
			if c.done && (st.Outcome != Inconclusive || !strings.Contains(st.Detail, c.detail)) {
				t.Errorf("outcome %s: %s, want inconclusive with %q", st.Outcome, st.Detail, c.detail)
			}
			for _, p := range st.Probes {
				if p.Decision == Above {
					t.Errorf("probe %+v saturated", p)
				}
			}
		})
	}
	// Judge (a sweep's cells): invalid with the reason, not saturated.
	v := r.Judge(broken(200), 1000)
	if v.State != Invalid || !strings.HasPrefix(v.Reasons[0], "testbed-bound: the chain committed none") {
		t.Errorf("Judge(broken) = %+v", v)
	}
	// The baseline latency ignores testbed-bound cells.
	lightest := hogged(50)
	if b := BaselineP50([]Cell{lightest, ok(100)}); b != 1000 {
		t.Errorf("BaselineP50 with a hogged lightest cell = %g, want 1000 (the valid cell's)", b)
	}
}
