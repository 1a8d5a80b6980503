// Package judge turns measured runs into verdicts: whether a load saturated
// the network, where the saturation point of a grid lies, when a saturation
// search may stop, and whether throughput decays under a sustained load.
// Every function is pure (numbers in, verdict out) and every verdict carries
// the rule it applied as text, so a report can state it rather than imply it.
package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Cell is one measured load, as the judge needs it: what was offered, what
// the chain did with it, and whether the load generator kept its schedule.
type Cell struct {
	Connections int     `json:"connections"`
	Rate        float64 `json:"rate"`    // tx/s per connection (the grid's r)
	Offered     float64 `json:"offered"` // tx/s offered in total
	Sent        int     `json:"sent"`
	Committed   int     `json:"committed"`
	Rejected    int     `json:"rejected"`
	Lost        int     `json:"lost"`
	TPS         float64 `json:"tps"` // committed tx/s from block times
	P50Ms       float64 `json:"latency_p50_ms"`
	P95Ms       float64 `json:"latency_p95_ms"`
	P99Ms       float64 `json:"latency_p99_ms"`
	// LoadValid is false when the generator, not the network, fell behind
	// its schedule; LoadInvalid says why.
	LoadValid   bool     `json:"load_valid"`
	LoadInvalid []string `json:"load_invalid,omitempty"`
	// Testbed lists why the run reflects the testbed, not the build (load
	// from outside the run, steal, a chain that committed nothing: results.json
	// testbed_bound without the generator's reasons, which LoadInvalid has).
	// Such a cell is left out like a generator-bound one, and a probe with
	// only such cells is TestbedBound, never saturated.
	Testbed []string `json:"testbed_bound,omitempty"`
	// SentRate and BusyTPS are the pace a lagging generator kept (sent
	// over its sends) and the chain's committed tx/s over its busy span;
	// set only for a run whose generator lagged (see Overloaded).
	SentRate float64 `json:"sent_rate,omitempty"`
	BusyTPS  float64 `json:"busy_tps,omitempty"`
	// BlockedShare is, for a lagging run, the largest share of one
	// connection's lag that the generator spent waiting on the node's
	// unread queue (load.json BlockedS over LagMaxMs, at most 1): the
	// node's backpressure. A starved generator's is 0.
	BlockedShare float64 `json:"blocked_share,omitempty"`
}

// OverloadMargin: a QA pair's run whose generator lagged still measured
// the chain's capacity when it sent at least this much more than the
// chain committed (the pairs run past saturation on purpose).
const OverloadMargin = 1.05

// FarOverload: a search probe whose generator lagged is saturated only
// when it sent at least this much more than the chain committed over its
// busy span. That span ends a block or two after the last send, so a
// chain that kept up with a 6 s probe reads up to ~1.25 (and 1.05 for a
// 30 s one); QA 8 and 9's far probes read 1.6-1.9.
const FarOverload = 1.5

// BackpressureShare: a lagging run whose node left the generator's queue
// unread for at least this share of a connection's lag was slowed by the
// node, not by its own machine, so what it was asked to send (Offered),
// not what it managed (SentRate), is the pace the chain failed to keep.
// The two causes are far apart: a starved generator's queue is empty
// (share 0); a node that stops reading makes the lag its wait (share ~1).
const BackpressureShare = 0.5

// Backpressured reports whether a lagging run's lag was mostly its wait on
// the node's unread queue (BlockedShare >= BackpressureShare).
func (c Cell) Backpressured() bool {
	return !c.LoadValid && c.BlockedShare >= BackpressureShare
}

// pacedByNode reports whether a lagging run is judged at its offered rate:
// the node pushed back (its reads set the generator's pace) below it.
func (c Cell) pacedByNode() bool { return c.Backpressured() && c.Offered > c.SentRate }

// overloadPace is the rate the chain was asked to keep in a lagging run:
// the offered rate when the node set the generator's pace, else what the
// generator sent per second.
func (c Cell) overloadPace() float64 {
	if c.pacedByNode() {
		return c.Offered
	}
	return c.SentRate
}

// Overloaded reports whether the generator fell behind its schedule but
// the pace it was held to (overloadPace) was still at least FarOverload x
// what the chain committed over its busy span: the chain, not the
// generator, set the pace, so the run measured an overload. Two ways to
// tell: the generator sent that far past the chain anyway (a node's
// backpressure on the websocket does that far past capacity), or the node
// left its queue unread (Backpressured) while far less than offered was
// committed (QA 12: sent 1.06-1.26 x committed, offered ~1.9 x). A
// generator starved by its machine sends no faster than the chain commits,
// waits on no queue, and is not overloaded.
func (c Cell) Overloaded() bool {
	return !c.LoadValid && c.Sent > 0 && len(c.Testbed) == 0 && c.BusyTPS > 0 && c.overloadPace() >= FarOverload*c.BusyTPS
}

// judgedRatio is the committed share the rule judges: committed/sent for a
// measured run, committed per second over the pace (BusyTPS/overloadPace)
// for an overloaded one; false for a run that says nothing about the
// network.
func (c Cell) judgedRatio() (float64, bool) {
	switch {
	case c.Measured():
		return c.CommittedRatio(), true
	case c.Overloaded():
		return c.BusyTPS / c.overloadPace(), true
	}
	return 0, false
}

// overloadDesc says what an overloaded run measured.
func (c Cell) overloadDesc() string {
	if c.pacedByNode() {
		return fmt.Sprintf("the node left its queue unread (%.0f %% of the generator's lag), the chain committed %.0f of %.0f tx/s offered", 100*c.BlockedShare, c.BusyTPS, c.Offered)
	}
	return fmt.Sprintf("committed %.0f of %.0f tx/s sent", c.BusyTPS, c.SentRate)
}

// Measured reports whether the cell measured the network: its generator
// kept its schedule, it sent something, and the testbed did not bound it.
func (c Cell) Measured() bool { return c.LoadValid && c.Sent > 0 && len(c.Testbed) == 0 }

// CommittedRatio is committed / sent (0 when nothing was sent).
func (c Cell) CommittedRatio() float64 {
	if c.Sent == 0 {
		return 0
	}
	return float64(c.Committed) / float64(c.Sent)
}

// State is a cell's verdict.
type State string

const (
	OK        State = "ok"
	Saturated State = "saturated"
	// Invalid: the generator could not keep its schedule (or nothing was
	// sent), so the cell says nothing about the network.
	Invalid State = "invalid"
)

// Rule is the saturation rule. A cell is saturated when the chain committed
// less than MinCommitted of what was sent, or when its median latency
// exceeds LatencyFactor times the lightest load's; it is invalid instead when
// the generator missed its schedule.
type Rule struct {
	MinCommitted  float64 `json:"min_committed"`  // fraction of sent, e.g. 0.99
	LatencyFactor float64 `json:"latency_factor"` // k, e.g. 3
}

// DefaultRule is the rule the reports use unless told otherwise.
func DefaultRule() Rule { return Rule{MinCommitted: 0.99, LatencyFactor: 3} }

// Validate names what is wrong with the rule's parameters.
func (r Rule) Validate() []error {
	var errs []error
	if !(r.MinCommitted > 0 && r.MinCommitted <= 1) {
		errs = append(errs, fmt.Errorf("min_committed: want a fraction in (0, 1], got %g", r.MinCommitted))
	}
	if !(r.LatencyFactor >= 1) || math.IsInf(r.LatencyFactor, 0) {
		errs = append(errs, fmt.Errorf("latency_factor: want a finite number >= 1, got %g", r.LatencyFactor))
	}
	return errs
}

// String states the rule in words.
func (r Rule) String() string {
	return fmt.Sprintf("a cell is saturated when committed < %s of sent, or its p50 latency > %g x the p50 of the lightest offered load; "+
		"a cell whose load generator missed its schedule (send lag beyond its bound) is invalid, not saturated, "+
		"unless it still sent >= %g x the tx/s the chain committed (then the chain set the pace: saturated)",
		pct(r.MinCommitted), r.LatencyFactor, FarOverload)
}

// Verdict is one cell's state and why.
type Verdict struct {
	State   State    `json:"state"`
	Reasons []string `json:"reasons,omitempty"`
}

// Judge applies the rule to one cell; baseP50 is the lightest load's median
// latency (0 or NaN: the latency criterion is not applied).
func (r Rule) Judge(c Cell, baseP50 float64) Verdict {
	if c.Overloaded() {
		if c.pacedByNode() {
			return Verdict{State: Saturated, Reasons: []string{fmt.Sprintf("overloaded: %s (%s < %s)",
				c.overloadDesc(), pct(c.BusyTPS/c.Offered), pct(r.MinCommitted))}}
		}
		return Verdict{State: Saturated, Reasons: []string{fmt.Sprintf("overloaded: the generator sent %.0f tx/s behind its schedule, the chain committed %.0f tx/s (%s < %s)",
			c.SentRate, c.BusyTPS, pct(c.BusyTPS/c.SentRate), pct(r.MinCommitted))}}
	}
	if !c.LoadValid {
		reasons := append([]string{"load generator missed its schedule"}, c.LoadInvalid...)
		return Verdict{State: Invalid, Reasons: reasons}
	}
	if len(c.Testbed) > 0 {
		return Verdict{State: Invalid, Reasons: []string{"testbed-bound: " + strings.Join(c.Testbed, "; ")}}
	}
	if c.Sent == 0 {
		return Verdict{State: Invalid, Reasons: []string{"nothing was sent"}}
	}
	var reasons []string
	if ratio := c.CommittedRatio(); ratio < r.MinCommitted {
		reasons = append(reasons, fmt.Sprintf("committed %d of %d sent (%s < %s)", c.Committed, c.Sent, pct(ratio), pct(r.MinCommitted)))
	}
	if baseP50 > 0 && c.P50Ms > r.LatencyFactor*baseP50 {
		reasons = append(reasons, fmt.Sprintf("p50 latency %.0f ms > %g x %.0f ms", c.P50Ms, r.LatencyFactor, baseP50))
	}
	if len(reasons) > 0 {
		return Verdict{State: Saturated, Reasons: reasons}
	}
	return Verdict{State: OK}
}

// BaselineP50 is the median latency of the lightest offered load among the
// valid cells (the median over its repeats), the reference of the latency
// criterion; 0 when no cell is valid.
func BaselineP50(cells []Cell) float64 {
	lightest := math.Inf(1)
	for _, c := range cells {
		if c.Measured() && c.Offered < lightest {
			lightest = c.Offered
		}
	}
	var p50s []float64
	for _, c := range cells {
		if c.Measured() && c.Offered == lightest {
			p50s = append(p50s, c.P50Ms)
		}
	}
	if len(p50s) == 0 {
		return 0
	}
	sort.Float64s(p50s)
	n := len(p50s)
	if n%2 == 1 {
		return p50s[n/2]
	}
	return (p50s[n/2-1] + p50s[n/2]) / 2
}

// JudgeAll judges every cell against the baseline of the whole set.
func (r Rule) JudgeAll(cells []Cell) ([]Verdict, float64) {
	base := BaselineP50(cells)
	out := make([]Verdict, len(cells))
	for i, c := range cells {
		out[i] = r.Judge(c, base)
	}
	return out, base
}

func pct(f float64) string {
	return fmt.Sprintf("%.4g %%", f*100)
}
