package judge

import (
	"fmt"
	"math"
	"strings"
)

// Decision is which side of the saturation rule a probe lies on.
type Decision string

const (
	Below     Decision = "sustainable" // the rate is below saturation
	Above     Decision = "saturated"
	Undecided Decision = "undecided" // the interval straddles the rule: repeat
	// GeneratorBound: the load generator missed its schedule in every
	// repeat so far, so the probe says nothing about the network yet; the
	// search repeats it up to its MaxRepeats.
	GeneratorBound Decision = "invalid"
	// TestbedBound: every repeat so far was testbed-bound (load from
	// outside the run, steal, a chain that committed nothing), so the probe
	// says nothing about the build; the search repeats it up to its
	// MaxRepeats and then ends inconclusive. Never saturated: a chain that
	// committed nothing under a loaded machine is a broken run.
	TestbedBound Decision = "testbed-bound"
)

// Decide places repeats of one rate on a side of the rule, by 95 %
// confidence intervals over the repeats: of committed/sent (saturated when
// its upper bound is below MinCommitted, sustainable when its lower bound is
// at or above) and, given a baseline, of p50/baseP50 against LatencyFactor.
// Fewer than minRepeats valid repeats are undecided. Repeats whose generator
// lagged are left out, unless they were overloaded (Cell.Overloaded: their
// committed share is BusyTPS over the pace they were held to); a rate with only left-out repeats is
// GeneratorBound.
func (r Rule) Decide(cells []Cell, baseP50 float64, minRepeats int) (Decision, string) {
	var ratio, lat []float64
	invalid := 0
	var testbed []string
	for _, c := range cells {
		if v, ok := c.judgedRatio(); ok && !c.Measured() {
			// Overloaded: its latency is the backlog's, not the chain's;
			// only its committed share counts.
			ratio = append(ratio, v)
			continue
		}
		if !c.LoadValid || c.Sent == 0 {
			invalid++
			continue
		}
		if len(c.Testbed) > 0 {
			testbed = append(testbed, strings.Join(c.Testbed, "; "))
			continue
		}
		ratio = append(ratio, c.CommittedRatio())
		if baseP50 > 0 {
			lat = append(lat, c.P50Ms/baseP50)
		}
	}
	if len(ratio) == 0 && invalid > 0 {
		return GeneratorBound, fmt.Sprintf("the load generator missed its schedule in all %d repeat(s)", invalid)
	}
	if len(ratio) == 0 && len(testbed) > 0 {
		return TestbedBound, fmt.Sprintf("testbed-bound in all %d repeat(s): %s", len(testbed), testbed[len(testbed)-1])
	}
	if len(ratio) < max(minRepeats, 1) {
		why := fmt.Sprintf("%d valid repeat(s), at least %d needed", len(ratio), minRepeats)
		if invalid > 0 {
			why += fmt.Sprintf(" (the load generator missed its schedule in %d)", invalid)
		}
		if len(testbed) > 0 {
			why += fmt.Sprintf(" (testbed-bound in %d: %s)", len(testbed), testbed[len(testbed)-1])
		}
		return Undecided, why
	}
	if len(ratio) < 2 {
		// One run has no spread: a zero-width "interval" is not a 95 %
		// one. Undecided, so the search repeats it (or, at its last
		// repeat, places it by its value and says it is not significant).
		desc := fmt.Sprintf("one run, not significant: committed/sent %.4f", ratio[0])
		if len(lat) > 0 {
			desc += fmt.Sprintf(", p50/baseline %.2f", lat[0])
		}
		return Undecided, desc
	}
	rs := SpreadOf(ratio)
	desc := fmt.Sprintf("committed/sent %.4f [%.4f, %.4f]", rs.Mean, rs.Lo, rs.Hi)
	var ls Spread
	if len(lat) > 0 {
		ls = SpreadOf(lat)
		desc += fmt.Sprintf(", p50/baseline %.2f [%.2f, %.2f]", ls.Mean, ls.Lo, ls.Hi)
	}
	desc += fmt.Sprintf(" over %d repeat(s)", len(ratio))
	switch {
	case rs.Hi < r.MinCommitted, len(lat) > 0 && ls.Lo > r.LatencyFactor:
		return Above, desc
	case rs.Lo >= r.MinCommitted && (len(lat) == 0 || ls.Hi <= r.LatencyFactor):
		return Below, desc
	default:
		return Undecided, desc
	}
}

// Search configures a saturation search over the per-connection rate at a
// fixed connection count: a geometric ramp from Start (x Growth) until a
// probe is saturated (or MaxRate), then a step to just below the rate the
// saturated probe committed (the chain's measured capacity), then geometric
// bisection until the bracket is narrower than Precision (relative to its
// lower end).
type Search struct {
	Start     float64 `json:"start_rate"`
	MinRate   float64 `json:"min_rate"`
	MaxRate   float64 `json:"max_rate"`
	Precision float64 `json:"precision"` // e.g. 0.05
	// Growth is the ramp's factor (0: 2, the first searches' doubling).
	Growth     float64 `json:"growth,omitempty"`
	MinRepeats int     `json:"min_repeats"` // per probe, before a decision
	MaxRepeats int     `json:"max_repeats"` // per probe, then it is undecided
	Budget     int     `json:"budget"`      // measured runs in all
	// Clear lets one run decide a probe far from the rule's threshold
	// (sequential testing: repeats only near it); 0: every probe needs
	// MinRepeats. See Rule.Clear.
	Clear float64 `json:"clear_margin,omitempty"`
}

// growth is the ramp factor, 2 for searches recorded before it existed.
func (s Search) growth() float64 {
	if s.Growth == 0 {
		return 2
	}
	return s.Growth
}

// Validate names what is wrong with the search's parameters.
func (s Search) Validate() []error {
	var errs []error
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !(s.MinRate > 0) || !finite(s.MinRate) {
		errs = append(errs, fmt.Errorf("min_rate: want a positive rate, got %g", s.MinRate))
	}
	if !(s.MaxRate > s.MinRate) || !finite(s.MaxRate) {
		errs = append(errs, fmt.Errorf("max_rate: want a rate above min_rate (%g), got %g", s.MinRate, s.MaxRate))
	}
	if !(s.Start >= s.MinRate && s.Start <= s.MaxRate) {
		errs = append(errs, fmt.Errorf("start_rate: want a rate in [min_rate, max_rate], got %g", s.Start))
	}
	if !(s.Precision > 0 && s.Precision < 1) {
		errs = append(errs, fmt.Errorf("precision: want a fraction in (0, 1), got %g", s.Precision))
	}
	if s.MinRepeats < 1 || s.MaxRepeats < s.MinRepeats {
		errs = append(errs, fmt.Errorf("repeats: want 1 <= min_repeats <= max_repeats, got %d and %d", s.MinRepeats, s.MaxRepeats))
	}
	if s.Growth != 0 && !(s.Growth > 1 && s.Growth <= 100) {
		errs = append(errs, fmt.Errorf("growth: want a factor in (1, 100], got %g", s.Growth))
	}
	if !(s.Clear >= 0 && s.Clear < 0.5) {
		errs = append(errs, fmt.Errorf("clear_margin: want a fraction in [0, 0.5), got %g", s.Clear))
	}
	if s.Budget < s.MinRepeats {
		errs = append(errs, fmt.Errorf("budget: want at least min_repeats (%d) runs, got %d", s.MinRepeats, s.Budget))
	}
	return errs
}

// ProbeResult is one probed rate with its repeats' decision.
type ProbeResult struct {
	Rate     float64  `json:"rate"`
	Runs     int      `json:"runs"`
	Decision Decision `json:"decision"`
	Why      string   `json:"why"`
}

// Outcome of a search.
const (
	Found        = "found"
	NoSaturation = "no saturation up to max_rate"
	AtMinimum    = "saturated at min_rate"
	Inconclusive = "inconclusive"
)

// SearchState is what the runs so far say: the next rate to probe, or the
// result.
type SearchState struct {
	Rule   string        `json:"rule"`
	Probes []ProbeResult `json:"probes"` // in the order first probed
	// Low is the highest sustainable rate, High the lowest saturated one
	// (0: none yet).
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Next is the rate to measure next; 0 when Done.
	Next    float64 `json:"next,omitempty"`
	Done    bool    `json:"done"`
	Outcome string  `json:"outcome,omitempty"`
	Detail  string  `json:"detail,omitempty"`
	Runs    int     `json:"runs"`
}

// TestbedRetries is how many runs a probe whose every repeat was
// testbed-bound gets beyond its MaxRepeats: a steal episode of a few
// seconds bound both 6 s repeats of a quick QA's first probe and ended the
// QA inconclusive in 32 s (CI, 2026-11-29). The search's Budget still
// bounds it.
const TestbedRetries = 2

// Step decides what to do after the runs so far (each Cell's Rate is the
// probed per-connection rate). It is a pure function of the runs, so a
// search can resume from the runs it recorded.
func (s Search) Step(r Rule, runs []Cell) SearchState {
	st := SearchState{Rule: s.rule(r), Runs: len(runs)}
	base := BaselineP50(runs)
	var order []float64
	byRate := map[float64][]Cell{}
	for _, c := range runs {
		if _, ok := byRate[c.Rate]; !ok {
			order = append(order, c.Rate)
		}
		byRate[c.Rate] = append(byRate[c.Rate], c)
	}
	var leaned []string
	for _, rate := range order {
		cells := byRate[rate]
		d, why := Undecided, ""
		if s.Clear > 0 {
			d, why = r.Clear(cells, base, s.Clear)
		}
		if d == Undecided {
			d, why = r.Decide(cells, base, s.MinRepeats)
		}
		if bad := invalidRuns(cells); d != Above && d != GeneratorBound && d != TestbedBound && 2*bad > len(cells) {
			// The generator missed its schedule in most repeats: the few
			// valid ones do not show the rate sustainable, and probing
			// higher would only starve it more. Retried up to MaxRepeats,
			// then the search ends here. (A saturated valid run stands:
			// the chain lost txs although the generator kept up.)
			d, why = GeneratorBound, fmt.Sprintf("the load generator missed its schedule in %d of %d repeats", bad, len(cells))
		}
		if d == Undecided && len(cells) >= s.MaxRepeats {
			if side, ok := r.lean(cells, base); ok {
				// The rule's threshold lies within this probe's noise: its
				// mean decides the side, and the result says so.
				d, why = side, fmt.Sprintf("by its mean, not significant after %d repeat(s): %s", len(cells), trimNotSignificant(why))
				leaned = append(leaned, fmt.Sprintf("%g (%s)", rate, side))
			}
		}
		st.Probes = append(st.Probes, ProbeResult{Rate: rate, Runs: len(cells), Decision: d, Why: why})
		switch d {
		case Below:
			st.Low = math.Max(st.Low, rate)
		case Above:
			if st.High == 0 || rate < st.High {
				st.High = rate
			}
		}
	}
	done := func(outcome, detail string) SearchState {
		if len(leaned) > 0 {
			detail += fmt.Sprintf("; probes at the rule's threshold within their noise, decided by their mean: %s tx/s", strings.Join(leaned, ", "))
		}
		st.Done, st.Outcome, st.Detail, st.Next = true, outcome, detail, 0
		return st
	}
	if st.High > 0 && st.Low >= st.High {
		return done(Inconclusive, fmt.Sprintf("not monotone: %g tx/s was sustainable but %g tx/s saturated", st.Low, st.High))
	}
	if len(st.Probes) > 0 {
		last := st.Probes[len(st.Probes)-1]
		switch last.Decision {
		case GeneratorBound:
			// A neighbour can starve the generator for one run: retry,
			// and give up only when every repeat allowed was invalid.
			// Then the rates between the highest sustainable one and this
			// one are still worth a probe (the ramp may have jumped far
			// past what the generator can offer): bisect below it.
			if last.Runs >= s.MaxRepeats && (st.Low == 0 || last.Rate <= st.Low*(1+s.Precision)) {
				detail := fmt.Sprintf("at %g tx/s per connection %s", last.Rate, last.Why)
				if st.Low > 0 {
					detail += fmt.Sprintf(": saturation lies above %g tx/s per connection, beyond what the load generator can offer on this machine", st.Low)
				}
				return done(Inconclusive, detail)
			}
			if last.Runs < s.MaxRepeats {
				if len(runs) >= s.Budget {
					return done(Inconclusive, fmt.Sprintf("budget of %d runs spent", s.Budget))
				}
				st.Next = last.Rate
				return st
			}
		case TestbedBound:
			// The machine, not the build, decided every repeat (another
			// job loaded the cores, the hypervisor stole them, the chain
			// committed nothing): repeat, TestbedRetries past the repeats
			// a probe is allowed, and end inconclusive when every one was
			// so.
			if last.Runs >= s.MaxRepeats+TestbedRetries {
				return done(Inconclusive, fmt.Sprintf("at %g tx/s per connection %s", last.Rate, last.Why))
			}
			if len(runs) >= s.Budget {
				return done(Inconclusive, fmt.Sprintf("budget of %d runs spent (%g tx/s per connection %s)", s.Budget, last.Rate, last.Why))
			}
			st.Next = last.Rate
			return st
		case Undecided:
			if last.Runs >= s.MaxRepeats {
				detail := fmt.Sprintf("%g tx/s still undecided after %d repeats (%s)", last.Rate, last.Runs, last.Why)
				if !strings.Contains(last.Why, "missed its schedule") {
					detail += ": the rule's threshold is within the noise there"
				}
				return done(Inconclusive, detail)
			}
			if len(runs) >= s.Budget {
				return done(Inconclusive, fmt.Sprintf("budget of %d runs spent", s.Budget))
			}
			st.Next = last.Rate
			return st
		}
	}
	// The rate the lowest saturated probe committed is the chain's capacity
	// as measured: a step to just below it brackets the point in one probe
	// when the chain keeps its pace under overload.
	capStep := func(lo, hi float64) (float64, bool) {
		est := committedRate(byRate[st.High])
		if est <= 0 {
			return 0, false
		}
		target := roundRate(est * (1 - s.Precision/2))
		if _, seen := byRate[target]; seen || target <= lo || target >= hi {
			return 0, false
		}
		return target, true
	}
	// genCap is the lowest rate given up as generator-bound: no probe at or
	// above it can say anything about the network.
	var genCap float64
	var genWhy string
	for _, p := range st.Probes {
		if p.Decision == GeneratorBound && p.Runs >= s.MaxRepeats && (genCap == 0 || p.Rate < genCap) {
			genCap, genWhy = p.Rate, p.Why
		}
	}
	var next float64
	switch {
	case st.Low > 0 && genCap > 0 && (st.High == 0 || genCap < st.High):
		if genCap <= st.Low*(1+s.Precision) {
			return done(Inconclusive, fmt.Sprintf("saturation lies above %g tx/s per connection, beyond what the load generator can offer on this machine (at %g tx/s per connection %s)",
				st.Low, genCap, genWhy))
		}
		next = math.Sqrt(st.Low * genCap)
	case st.Low > 0 && st.High > 0:
		if (st.High-st.Low)/st.Low <= s.Precision {
			return done(Found, fmt.Sprintf("highest sustainable rate %g tx/s per connection; saturation lies in [%g, %g) tx/s (%.1f %% wide, %s)",
				st.Low, st.Low, st.High, 100*(st.High-st.Low)/st.Low, sidesDecided(len(leaned))))
		}
		next = math.Sqrt(st.Low * st.High)
		if t, ok := capStep(st.Low*(1+s.Precision/2), st.High); ok {
			next = t
		}
	case st.Low > 0:
		if st.Low >= s.MaxRate {
			return done(NoSaturation, fmt.Sprintf("%g tx/s per connection was sustainable", st.Low))
		}
		next = math.Min(s.growth()*st.Low, s.MaxRate)
	case st.High > 0:
		if st.High <= s.MinRate {
			return done(AtMinimum, fmt.Sprintf("%g tx/s per connection already saturated", st.High))
		}
		next = math.Max(st.High/s.growth(), s.MinRate)
		if t, ok := capStep(next, st.High); ok {
			next = t
		}
	default:
		next = s.Start
	}
	if len(runs) >= s.Budget {
		return done(Inconclusive, fmt.Sprintf("budget of %d runs spent; saturation lies in (%g, %g)", s.Budget, st.Low, st.High))
	}
	next = roundRate(next)
	if _, seen := byRate[next]; seen {
		return done(Inconclusive, fmt.Sprintf("the bracket (%g, %g) is at the rate resolution (0.1 tx/s) before the precision", st.Low, st.High))
	}
	st.Next = next
	return st
}

// invalidRuns counts the repeats whose generator missed its schedule.
func invalidRuns(cells []Cell) int {
	n := 0
	for _, c := range cells {
		if (!c.LoadValid || c.Sent == 0) && !c.Overloaded() {
			n++
		}
	}
	return n
}

// committedRate is the mean committed tx/s per connection of a probe's valid
// and overloaded runs (0: none).
func committedRate(cells []Cell) float64 {
	var sum float64
	n := 0
	for _, c := range cells {
		tps := c.TPS
		if c.Overloaded() {
			tps = c.BusyTPS // the chain's pace under the backlog
		} else if !c.Measured() {
			continue
		}
		if tps > 0 && c.Connections > 0 {
			sum += tps / float64(c.Connections)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Clear decides a probe from runs far from the rule's threshold, so one run
// is enough there: saturated when every valid run committed less than
// MinCommitted - margin of what it sent, or had a p50 above 2 x
// LatencyFactor x the baseline's; sustainable when every valid run lost at
// most a tenth of what the rule tolerates (committed >= 1 - (1 -
// MinCommitted)/10) with a p50 at most LatencyFactor/2 x the baseline's.
// Anything else is Undecided: the repeats and their confidence intervals
// decide (Decide).
func (r Rule) Clear(cells []Cell, baseP50, margin float64) (Decision, string) {
	var above, below, valid int
	var desc []string
	for _, c := range cells {
		ratio, ok := c.judgedRatio()
		if !ok {
			continue
		}
		valid++
		lat := 0.0
		if baseP50 > 0 && c.Measured() {
			lat = c.P50Ms / baseP50
		}
		switch {
		case ratio < r.MinCommitted-margin || lat > 2*r.LatencyFactor:
			above++
		case ratio >= 1-(1-r.MinCommitted)/10 && lat <= r.LatencyFactor/2:
			below++
		}
		d := fmt.Sprintf("committed/sent %.4f", ratio)
		if !c.Measured() {
			d = fmt.Sprintf("overloaded: %s (%.4f)", c.overloadDesc(), ratio)
		} else if baseP50 > 0 {
			d += fmt.Sprintf(", p50/baseline %.2f", lat)
		}
		desc = append(desc, d)
	}
	why := fmt.Sprintf("clear in %d run(s): %s", valid, strings.Join(desc, "; "))
	switch {
	case valid == 0:
		return Undecided, ""
	case above == valid:
		return Above, why
	case below == valid:
		return Below, why
	}
	return Undecided, ""
}

// roundRate keeps probed rates readable (0.1 tx/s).
func roundRate(r float64) float64 { return math.Round(r*10) / 10 }

// lean places a probe whose intervals stay undecided by the means of its
// valid repeats (false: no valid repeat).
func (r Rule) lean(cells []Cell, baseP50 float64) (Decision, bool) {
	var ratio, lat []float64
	for _, c := range cells {
		if v, ok := c.judgedRatio(); ok {
			ratio = append(ratio, v)
			if baseP50 > 0 && c.Measured() {
				lat = append(lat, c.P50Ms/baseP50)
			}
		}
	}
	if len(ratio) == 0 {
		return Undecided, false
	}
	if SpreadOf(ratio).Mean < r.MinCommitted || (len(lat) > 0 && SpreadOf(lat).Mean > r.LatencyFactor) {
		return Above, true
	}
	return Below, true
}

func (s Search) rule(r Rule) string {
	clear := ""
	if s.Clear > 0 {
		clear = fmt.Sprintf("one run decides a probe far from the threshold (saturated: committed/sent < %s or p50 > %g x baseline; sustainable: committed/sent >= %s and p50 <= %g x baseline); otherwise ",
			pct(r.MinCommitted-s.Clear), 2*r.LatencyFactor, pct(1-(1-r.MinCommitted)/10), r.LatencyFactor/2)
	}
	return fmt.Sprintf("%s. Search: a geometric ramp (x %g) from %g tx/s per connection until a probe is saturated (at most %g), then a probe at %g %% below the rate the lowest saturated probe committed (its measured capacity) when that lies inside the bracket, then geometric bisection; "+
		"%seach probe is repeated (%d to %d times) until the 95 %% confidence interval over its repeats of committed/sent (and of p50 / the lightest probe's p50) "+
		"lies on one side of the rule (a probe still undecided after the last repeat sits on the threshold within its noise and is placed by its means, which the result names; a probe whose load generator missed its schedule in most repeats is not placed, and after the last repeat the search ends there, inconclusive; a testbed-bound repeat (load from outside the run, CPU steal, a chain that committed nothing) is left out, and a probe with only such repeats is repeated, then ends the search inconclusive); the search stops when the bracket is narrower than %g %% of its lower end, or after %d runs (inconclusive)",
		r.String(), s.growth(), s.Start, s.MaxRate, s.Precision*50, clear, s.MinRepeats, s.MaxRepeats, s.Precision*100, s.Budget)
}

// sidesDecided says how the bracket's ends were placed: a probe placed by
// its mean is not "decided at 95 %".
func sidesDecided(leaned int) string {
	if leaned == 0 {
		return "each side decided at 95 % confidence over 2 or more repeats, or clearly in one run"
	}
	return "a probe at the threshold placed by its mean, not significant (named below)"
}

// trimNotSignificant drops Decide's own "not significant" lead, which the
// leaned probe's reason states once.
func trimNotSignificant(why string) string {
	if _, rest, ok := strings.Cut(why, "not significant: "); ok {
		return rest
	}
	return why
}
