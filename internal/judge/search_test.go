package judge

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// fakeChain answers a probe like a chain saturating at satRate tx/s per
// connection: below it everything commits (with a little latency noise);
// above it committed/sent falls and latency climbs. Near the threshold the
// ratio is noisy, so some probes need repeats.
func fakeChain(satRate float64, rng *rand.Rand) func(rate float64) Cell {
	return func(rate float64) Cell {
		sent := int(rate * 10)
		frac := 1.0
		p50 := 700 + 20*rng.Float64()
		if rate > satRate {
			frac = satRate / rate
			p50 = 700 * rate / satRate
		}
		frac -= 0.004 * rng.Float64() // noise around the 99 % line near saturation
		frac = math.Min(frac, 1)
		if rate < 0.9*satRate {
			frac = 1
		}
		committed := int(float64(sent) * frac)
		return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: sent, Committed: committed, Lost: sent - committed, P50Ms: p50, LoadValid: true}
	}
}

func runSearch(t *testing.T, s Search, measure func(float64) Cell) SearchState {
	t.Helper()
	var runs []Cell
	for i := 0; i < 1000; i++ {
		st := s.Step(DefaultRule(), runs)
		if st.Done {
			return st
		}
		runs = append(runs, measure(st.Next))
	}
	t.Fatal("search did not stop after 1000 runs")
	return SearchState{}
}

func TestSearchFindsSaturation(t *testing.T) {
	s := Search{Start: 50, MinRate: 10, MaxRate: 5000, Precision: 0.05, MinRepeats: 2, MaxRepeats: 6, Budget: 60}
	if errs := s.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	found := 0
	defer func() {
		// The noise sits on the threshold for a few seeds; most must finish.
		if found < 12 {
			t.Errorf("found in %d of 15 searches, want at least 12", found)
		}
	}()
	for _, sat := range []float64{137, 700, 1234} {
		for seed := uint64(1); seed <= 5; seed++ {
			st := runSearch(t, s, fakeChain(sat, rand.New(rand.NewPCG(seed, 1))))
			// By the rule (committed >= 99 %), the chain is sustainable up to
			// between sat and sat/0.99 (the noise moves it within).
			switch st.Outcome {
			case Found:
				found++
				if !(st.Low <= sat/0.99 && sat < st.High) {
					t.Errorf("sat %g seed %d: bracket [%g, %g) misses it", sat, seed, st.Low, st.High)
				}
				if (st.High-st.Low)/st.Low > s.Precision {
					t.Errorf("sat %g seed %d: bracket [%g, %g) wider than %g", sat, seed, st.Low, st.High, s.Precision)
				}
			case Inconclusive:
				// Allowed only when a probe sat on the noisy threshold, and
				// the bracket must still hold the truth.
				if !strings.Contains(st.Detail, "undecided") || (st.High > 0 && !(st.Low <= sat/0.99 && sat < st.High)) {
					t.Errorf("sat %g seed %d: %s: %s", sat, seed, st.Outcome, st.Detail)
				}
			default:
				t.Errorf("sat %g seed %d: outcome %s (%s)", sat, seed, st.Outcome, st.Detail)
			}
			if st.Runs > s.Budget {
				t.Errorf("%d runs > budget %d", st.Runs, s.Budget)
			}
		}
	}
}

func TestSearchEnds(t *testing.T) {
	s := Search{Start: 100, MinRate: 50, MaxRate: 400, Precision: 0.05, MinRepeats: 1, MaxRepeats: 3, Budget: 30}
	always := func(frac float64, valid bool) func(float64) Cell {
		return func(rate float64) Cell {
			return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: int(1000 * frac), P50Ms: 700, LoadValid: valid}
		}
	}
	tests := []struct {
		name    string
		measure func(float64) Cell
		outcome string
		detail  string
		probes  []float64
	}{
		{"never saturates", always(1, true), NoSaturation, "400 tx/s", []float64{100, 200, 400}},
		{"saturated from the start", always(0.5, true), AtMinimum, "50 tx/s", []float64{100, 50}},
		{"generator cannot keep up", always(1, false), Inconclusive, "missed its schedule in all 3 repeat(s)", []float64{100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := runSearch(t, s, tt.measure)
			if st.Outcome != tt.outcome || !strings.Contains(st.Detail, tt.detail) {
				t.Fatalf("%s: %s, want %s with %q", tt.name, st.Outcome+": "+st.Detail, tt.outcome, tt.detail)
			}
			var got []float64
			for _, p := range st.Probes {
				got = append(got, p.Rate)
			}
			if len(got) != len(tt.probes) {
				t.Fatalf("probes %v, want %v", got, tt.probes)
			}
			for i := range got {
				if got[i] != tt.probes[i] {
					t.Fatalf("probes %v, want %v", got, tt.probes)
				}
			}
		})
	}
	// One starved run is retried, not the end of the search; the probe is
	// then decided by two valid runs (one has no spread).
	starvedOnce := func() func(float64) Cell {
		n := 0
		return func(rate float64) Cell {
			n++
			return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: 1000, P50Ms: 700, LoadValid: n != 1}
		}
	}
	if st := runSearch(t, s, starvedOnce()); st.Outcome != NoSaturation || st.Probes[0].Runs != 3 {
		t.Errorf("one starved run: %s (%s), probes %+v", st.Outcome, st.Detail, st.Probes)
	}
	// A probe valid once in three repeats is not placed by that one run:
	// the search does not ramp on to MaxRate (seen in a full QA: 8 min of
	// invalid probes at 3000 tx/s); it bisects between the highest
	// sustainable rate and the generator-bound one, and ends where the two
	// meet within the precision (an A/A QA ramped 800 -> 3000, both
	// generator-bound, and ended "above 800").
	starvedAbove := func(limit float64) func(float64) Cell {
		n := 0
		return func(rate float64) Cell {
			c := Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: 995, P50Ms: 700, LoadValid: true}
			if rate > limit {
				n++
				c.LoadValid = n%3 == 0 // the third repeat keeps up, just
			}
			return c
		}
	}
	st := runSearch(t, s, starvedAbove(150))
	if st.Outcome != Inconclusive || !strings.Contains(st.Detail, "missed its schedule in 2 of 3 repeats") ||
		!strings.Contains(st.Detail, "saturation lies above 147.7 tx/s") || !strings.Contains(st.Detail, "at 154.2 tx/s") || st.Runs != 15 {
		t.Errorf("mostly starved probe: %s (%s), %d runs, probes %+v", st.Outcome, st.Detail, st.Runs, st.Probes)
	}
	var rates []float64
	for _, p := range st.Probes {
		rates = append(rates, p.Rate)
	}
	if want := []float64{100, 200, 141.4, 168.2, 154.2, 147.7}; !slices.Equal(rates, want) {
		t.Errorf("probes %v, want %v (bisecting below the generator-bound rate)", rates, want)
	}
	// A saturation point below the generator's limit is still found
	// after the ramp overshot into it.
	satBelowLimit := func(rate float64) Cell {
		c := Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: 1000, P50Ms: 700, LoadValid: rate <= 300, TPS: math.Min(rate, 160)}
		if rate > 160 {
			c.Committed, c.Lost, c.P50Ms = int(1000*160/rate), 1000-int(1000*160/rate), 700*rate/160
		}
		return c
	}
	wide := s
	wide.Growth, wide.MaxRate = 4, 1000
	// (The rule's 99 % committed puts the point at 160/0.99 = 161.6.)
	if st := runSearch(t, wide, satBelowLimit); st.Outcome != Found || st.Low > 161.6 || st.High <= 161.6 {
		t.Errorf("saturation at 161.6 under a generator limit of 300: %s (%s), probes %+v", st.Outcome, st.Detail, st.Probes)
	}
	// A budget too small to finish ends inconclusive, with the bracket so far.
	small := s
	small.Budget = 2
	small.MaxRate = 100000
	st = runSearch(t, small, always(1, true))
	if st.Outcome != Inconclusive || !strings.Contains(st.Detail, "budget of 2 runs") {
		t.Errorf("small budget: %s: %s", st.Outcome, st.Detail)
	}
}

func TestSearchRepeatsUntilDecided(t *testing.T) {
	s := Search{Start: 100, MinRate: 10, MaxRate: 1000, Precision: 0.05, MinRepeats: 2, MaxRepeats: 4, Budget: 20}
	rule := DefaultRule()
	// One run: not enough. Two runs straddling 99 %: undecided, repeat.
	runs := []Cell{{Rate: 100, Offered: 100, Sent: 1000, Committed: 1000, P50Ms: 700, LoadValid: true}}
	if st := s.Step(rule, runs); st.Next != 100 {
		t.Fatalf("after one run: next %g, want a repeat of 100", st.Next)
	}
	runs = append(runs, Cell{Rate: 100, Offered: 100, Sent: 1000, Committed: 985, P50Ms: 700, LoadValid: true})
	st := s.Step(rule, runs)
	if st.Next != 100 || st.Probes[0].Decision != Undecided {
		t.Fatalf("straddling: %+v", st)
	}
	runs = append(runs, runs[0], runs[0])
	st = s.Step(rule, runs)
	// Still straddling after max repeats: the threshold is within this
	// probe's noise; its mean (0.9962 >= 0.99) places it and the search goes on.
	if st.Done || st.Next != 200 || st.Probes[0].Decision != Below || !strings.Contains(st.Probes[0].Why, "by its mean, not significant after 4 repeat(s)") {
		t.Fatalf("after max repeats: %+v", st)
	}
	// Two clearly saturated runs at 200, then precision reached with a
	// loose precision: the result names the probe placed by its mean.
	loose := s
	loose.Precision = 1.5
	sat := Cell{Rate: 200, Offered: 200, Sent: 1000, Committed: 500, P50Ms: 700, LoadValid: true}
	st = loose.Step(rule, append(runs, sat, sat))
	if !st.Done || st.Outcome != Found || !strings.Contains(st.Detail, "decided by their mean: 100 (sustainable) tx/s") {
		t.Fatalf("found: %+v", st)
	}
	if !strings.Contains(st.Rule, "95 % confidence interval") {
		t.Errorf("rule text %q", st.Rule)
	}
}

func TestClear(t *testing.T) {
	r := DefaultRule()
	run := func(committed int, p50 float64) Cell {
		return Cell{Connections: 1, Rate: 100, Offered: 100, Sent: 1000, Committed: committed, P50Ms: p50, LoadValid: true}
	}
	tests := []struct {
		name  string
		cells []Cell
		want  Decision
	}{
		{"nothing lost, fast", []Cell{run(1000, 700)}, Below},
		{"0.1 % lost is still clear", []Cell{run(999, 700)}, Below},
		{"0.2 % lost: near the threshold", []Cell{run(998, 700)}, Undecided},
		{"nothing lost but slow (2 x base)", []Cell{run(1000, 1400)}, Undecided},
		{"lost 7 %", []Cell{run(930, 700)}, Above},
		{"lost 5 %: near", []Cell{run(950, 700)}, Undecided},
		{"latency beyond 2 x the factor", []Cell{run(1000, 700*6.5)}, Above},
		{"latency beyond the factor only", []Cell{run(1000, 700*4)}, Undecided},
		{"runs disagree", []Cell{run(1000, 700), run(900, 700)}, Undecided},
		{"invalid runs say nothing", []Cell{{Rate: 100, Sent: 1000, Committed: 1000, P50Ms: 700}}, Undecided},
	}
	for _, tt := range tests {
		d, why := r.Clear(tt.cells, 700, 0.05)
		if d != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, d, why, tt.want)
		}
		if d != Undecided && !strings.Contains(why, "clear in") {
			t.Errorf("%s: why %q", tt.name, why)
		}
	}
}

// capChain is a chain whose capacity is satRate tx/s per connection and that
// keeps that pace under overload: its runs report the committed TPS, noisy
// near the threshold like fakeChain's.
func capChain(satRate float64, rng *rand.Rand) func(rate float64) Cell {
	inner := fakeChain(satRate, rng)
	return func(rate float64) Cell {
		c := inner(rate)
		c.TPS = math.Min(rate, satRate) * (1 - 0.01*rng.Float64())
		return c
	}
}

func TestSearchSequentialAndCapacityStep(t *testing.T) {
	s := Search{Start: 200, MinRate: 10, MaxRate: 2000, Precision: 0.05, Growth: 4, Clear: 0.05, MinRepeats: 2, MaxRepeats: 3, Budget: 20}
	if errs := s.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	old := Search{Start: 100, MinRate: 10, MaxRate: 2000, Precision: 0.05, MinRepeats: 2, MaxRepeats: 5, Budget: 30}
	var newRuns, oldRuns, found int
	for _, sat := range []float64{137, 700, 1234, 1925} {
		for seed := uint64(1); seed <= 5; seed++ {
			st := runSearch(t, s, capChain(sat, rand.New(rand.NewPCG(seed, 2))))
			ost := runSearch(t, old, capChain(sat, rand.New(rand.NewPCG(seed, 2))))
			newRuns += st.Runs
			oldRuns += ost.Runs
			if st.Outcome == Found {
				found++
				if !(st.Low <= sat/0.99 && sat < st.High) || (st.High-st.Low)/st.Low > s.Precision {
					t.Errorf("sat %g seed %d: bracket [%g, %g)", sat, seed, st.Low, st.High)
				}
			} else if !strings.Contains(st.Detail, "undecided") {
				t.Errorf("sat %g seed %d: %s: %s", sat, seed, st.Outcome, st.Detail)
			}
		}
	}
	if found < 17 {
		t.Errorf("found in %d of 20 searches", found)
	}
	// Far probes take one run and the capacity step skips most of the
	// bisection: well under the old search's runs on the same chains.
	if float64(newRuns) > 0.6*float64(oldRuns) {
		t.Errorf("%d runs with the new defaults, %d with the old: want at most 60 %%", newRuns, oldRuns)
	}
	t.Logf("runs over 20 searches: new %d, old %d", newRuns, oldRuns)
}

func TestSearchSteps(t *testing.T) {
	s := Search{Start: 200, MinRate: 10, MaxRate: 2000, Precision: 0.05, Growth: 4, Clear: 0.05, MinRepeats: 2, MaxRepeats: 3, Budget: 20}
	rule := DefaultRule()
	cell := func(rate float64, committed int, p50, tps float64) Cell {
		return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: committed, P50Ms: p50, TPS: tps, LoadValid: true}
	}
	var runs []Cell
	step := func(want float64, add ...Cell) SearchState {
		t.Helper()
		runs = append(runs, add...)
		st := s.Step(rule, runs)
		if st.Done || st.Next != want {
			t.Fatalf("after %d runs: next %g (done %v: %s), want %g", len(runs), st.Next, st.Done, st.Detail, want)
		}
		return st
	}
	step(200)
	// A clear run at 200 decides it alone; the ramp grows x 4.
	st := step(800, cell(200, 1000, 700, 200))
	if st.Probes[0].Runs != 1 || st.Probes[0].Decision != Below {
		t.Fatalf("probe 200: %+v", st.Probes[0])
	}
	step(2000, cell(800, 1000, 800, 800)) // capped at max_rate
	// 2000 clearly saturated, committing 1900 tx/s: the next probe is 2.5 %
	// below that capacity, not the geometric middle (1264.9).
	step(1852.5, cell(2000, 900, 3000, 1900))
	// Near the threshold: one run is not enough, two that agree are.
	step(1852.5, cell(1852.5, 998, 1600, 1850))
	st = step(1924.8, cell(1852.5, 999, 1650, 1850)) // sqrt(1852.5 x 2000)
	if st.Probes[3].Decision != Below || st.Probes[3].Runs != 2 {
		t.Fatalf("probe 1852.5: %+v", st.Probes[3])
	}
	runs = append(runs, cell(1924.8, 945, 2500, 1900), cell(1924.8, 950, 2600, 1900))
	st = s.Step(rule, runs)
	if !st.Done || st.Outcome != Found || st.Low != 1852.5 || st.High != 1924.8 || st.Runs != 7 {
		t.Fatalf("end: %+v", st)
	}
	if !strings.Contains(st.Rule, "x 4") || !strings.Contains(st.Rule, "one run decides") {
		t.Errorf("rule %q", st.Rule)
	}
	// Saturated from the start: the capacity step replaces the /4 ramp down.
	runs = []Cell{cell(200, 500, 700, 100)}
	if st := s.Step(rule, runs); st.Next != 97.5 {
		t.Errorf("saturated first probe: next %g, want 97.5", st.Next)
	}
}

// A probe judged from one run near the rule's threshold is never printed
// as decided at 95 %: it is undecided while repeats are allowed, then
// placed by its value and marked not significant, and the search's result
// says a probe was placed so.
func TestOneRunProbeNotSignificant(t *testing.T) {
	rule := DefaultRule()
	for _, maxRepeats := range []int{1, 2} {
		s := Search{Start: 100, MinRate: 10, MaxRate: 1000, Precision: 0.5, MinRepeats: 1, MaxRepeats: maxRepeats, Budget: 20, Growth: 2}
		n := 0
		near := func(rate float64) Cell { // ~98.5 % and ~99.5 % committed: either side of 99 %, within the runs' noise
			n++
			c := Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: 993 + 4*(n%2), P50Ms: 700, LoadValid: true}
			if rate > 150 {
				c.Committed -= 10
			}
			return c
		}
		runs := []Cell{near(100)}
		st := s.Step(rule, runs)
		if maxRepeats > 1 && (st.Probes[0].Decision != Undecided || st.Next != 100) {
			t.Fatalf("max %d: one run near the threshold: %+v, want undecided and a repeat", maxRepeats, st.Probes[0])
		}
		st = runSearch(t, s, near)
		for _, p := range st.Probes {
			if p.Runs == 1 && strings.Contains(p.Why, "[") {
				t.Errorf("max %d: a one-run probe printed with an interval: %+v", maxRepeats, p)
			}
			if p.Decision != Undecided && p.Decision != GeneratorBound && !strings.Contains(p.Why, "not significant") && p.Runs < 2 {
				t.Errorf("max %d: a one-run probe decided without saying it is not significant: %+v", maxRepeats, p)
			}
		}
		if strings.Contains(st.Detail, "decided at 95 %") {
			t.Errorf("max %d: result claims 95 %% with one-run probes: %s", maxRepeats, st.Detail)
		}
		if st.Outcome == Found && !strings.Contains(st.Detail, "not significant") {
			t.Errorf("max %d: result does not name the probes placed by their value: %s", maxRepeats, st.Detail)
		}
	}
}

// A probe far past capacity whose generator fell behind because the node
// would not take its txs (the websocket's backpressure: it still sent
// faster than the chain committed) is saturated from one run, and the
// capacity step reads the chain's pace from it. One whose generator was
// starved (it sent no faster than the chain committed) still says
// nothing and is retried.
func TestOverloadedProbe(t *testing.T) {
	s := Search{Start: 200, MinRate: 10, MaxRate: 3000, Precision: 0.05, Growth: 4, Clear: 0.05, MinRepeats: 2, MaxRepeats: 3, Budget: 20}
	rule := DefaultRule()
	ok := func(rate float64) Cell {
		return Cell{Connections: 1, Rate: rate, Offered: rate, Sent: 1000, Committed: 1000, P50Ms: 700, TPS: rate, LoadValid: true}
	}
	lagged := func(sent, busy float64) Cell {
		return Cell{Connections: 1, Rate: 3000, Offered: 3000, Sent: 90000, Committed: 90000, P50Ms: 20000, TPS: busy,
			LoadValid: false, LoadInvalid: []string{"send lag p99 31 s > 1 s"}, SentRate: sent, BusyTPS: busy}
	}
	base := []Cell{ok(200), ok(800)}
	// pushedBack: the generator waited share of its lag on the node's
	// unread queue.
	pushedBack := func(sent, busy, share float64) Cell {
		c := lagged(sent, busy)
		c.BlockedShare = share
		return c
	}
	tests := []struct {
		name     string
		far      Cell
		want     Decision
		wantNext float64
		why      string
	}{
		// QA 9's far probe: 90 000 txs sent at ~1290 tx/s, 750 committed.
		{"overloaded", lagged(1290, 750), Above, 0, "overloaded: committed 750 of 1290 tx/s sent"},
		{"starved generator", lagged(760, 750), GeneratorBound, 3000, ""},
		// A chain that kept up with a short probe reads up to ~1.25:
		// the busy span ends a block or two after the last send.
		{"within the margin", lagged(930, 750), GeneratorBound, 3000, ""},
		// QA 12's probes: the node stopped reading, so the generator sent
		// only ~1.2 x what the chain committed, of 3000 offered.
		{"backpressure", pushedBack(900, 750, 0.9), Above, 0,
			"overloaded: the node left its queue unread (90 % of the generator's lag), the chain committed 750 of 3000 tx/s offered (0.2500)"},
		// A lag the node explains only in part is the generator's.
		{"starved, a little pushback", pushedBack(900, 750, 0.2), GeneratorBound, 3000, ""},
	}
	for _, tt := range tests {
		runs := append(slices.Clone(base), tt.far)
		st := s.Step(rule, runs)
		if got := st.Probes[2]; got.Decision != tt.want || got.Runs != 1 {
			t.Errorf("%s: probe %+v, want %s", tt.name, got, tt.want)
			continue
		}
		if tt.want == Above {
			if st.High != 3000 || !strings.Contains(st.Probes[2].Why, tt.why) {
				t.Errorf("%s: high %g, why %q", tt.name, st.High, st.Probes[2].Why)
			}
			// 800 sustainable, the chain's pace 750: the capacity step is
			// below the bracket, so the middle is probed.
			if want := math.Sqrt(800 * 3000); math.Abs(st.Next-want) > 0.1 {
				t.Errorf("%s: next %g, want %g", tt.name, st.Next, want)
			}
		} else if st.Next != tt.wantNext {
			t.Errorf("%s: next %g, want %g (a retry)", tt.name, st.Next, tt.wantNext)
		}
	}
	// Overloaded runs are saturated cells in a sweep's verdicts too; a
	// starved one stays invalid.
	if v := rule.Judge(lagged(1290, 750), 700); v.State != Saturated || !strings.Contains(v.Reasons[0], "overloaded") {
		t.Errorf("judge overloaded: %+v", v)
	}
	if v := rule.Judge(lagged(760, 750), 700); v.State != Invalid {
		t.Errorf("judge starved: %+v", v)
	}
	if v := rule.Judge(pushedBack(900, 750, 0.9), 700); v.State != Saturated || !strings.Contains(v.Reasons[0], "750 of 3000 tx/s offered (25 % < 99 %)") {
		t.Errorf("judge pushed back: %+v", v)
	}
	// A node that pushed back while the chain committed near the offered
	// rate did not show an overload: the run stays invalid.
	near := pushedBack(900, 2500, 0.9)
	if near.Overloaded() || rule.Judge(near, 700).State != Invalid {
		t.Errorf("pushed back near the offered rate counted as overloaded: %+v", rule.Judge(near, 700))
	}
	// A testbed-bound lagging run is never overloaded.
	tb := lagged(1290, 750)
	tb.Testbed = []string{"steal 12 %"}
	if tb.Overloaded() {
		t.Error("testbed-bound run counted as overloaded")
	}
}
