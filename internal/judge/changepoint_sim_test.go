package judge

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

var cpTable = flag.String("cptable", "", "write the change-point operating characteristic's Markdown tables to FILE")

// cpPool is one metric's recorded A/A values: runs of one build, which a
// simulated series draws its repeats from.
type cpPool struct {
	name   string
	better Better
	values []float64
}

// recordedPools are the metrics of testdata/aa-runs.json: the saturation
// step's committed tx/s (both runs of every pair: both builds were the
// same) and the steady rounds' judged metrics.
func recordedPools(rec *Recorded) []cpPool {
	sat := cpPool{name: "saturation tx/s", better: HigherIsBetter}
	for _, p := range rec.Pairs {
		sat.values = append(sat.values, p.Base, p.Cand)
	}
	out := []cpPool{sat}
	for _, m := range []Metric{{Key: "tps", Better: HigherIsBetter}, {Key: "latency_avg", Better: LowerIsBetter},
		{Key: "latency_p95", Better: LowerIsBetter}, {Key: "blocks_per_min", Better: HigherIsBetter}} {
		p := cpPool{name: "steady " + m.Key, better: m.Better}
		for _, rd := range rec.Steady {
			p.values = append(p.values, rd.Base[m.Key], rd.Cand[m.Key])
		}
		out = append(out, p)
	}
	return out
}

// draw is n values of the pool, each drawn independently, times f.
func (p cpPool) draw(rng *rand.Rand, n int, f float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f * p.values[rng.IntN(len(p.values))]
	}
	return out
}

// cpOutcome is how often, over the trials, a change point was marked at
// the planted step's index (Hit; an A/A series has none), anywhere else
// (Other: on an A/A series, the false-alarm rate), and how often a hit's
// interval held the planted ratio (Cover, of the hits).
type cpOutcome struct {
	Hit, Other, Cover float64
}

// simChangePoints draws trials series of 5 to 8 builds × repeats values
// from the pool (with replacement, each value independently: builds run
// interleaved meet the machine's states alike) and multiplies the builds
// from a random index on by 1 − step (no step when step is 0).
func simChangePoints(tb testing.TB, pool cpPool, repeats int, step float64, trials int, seed uint64) cpOutcome {
	rng := rand.New(rand.NewPCG(seed, uint64(repeats)<<32|uint64(step*1000)))
	cfg := DefaultChangeConfig(pool.better)
	var o cpOutcome
	for t := 0; t < trials; t++ {
		n := 5 + rng.IntN(4)
		at := -1
		if step > 0 {
			at = 1 + rng.IntN(n-1)
		}
		series := make([]SeriesPoint, n)
		for b := range series {
			f := 1.0
			if at >= 0 && b >= at {
				f = 1 - step
			}
			series[b] = SeriesPoint{Label: fmt.Sprint("b", b), Values: pool.draw(rng, repeats, f)}
		}
		cps, err := ChangePoints(series, cfg, rng)
		if err != nil {
			tb.Fatal(err)
		}
		other := false
		for _, c := range cps {
			if c.Index != at {
				other = true
				continue
			}
			o.Hit++
			if c.Lo <= 1-step && 1-step <= c.Hi {
				o.Cover++
			}
		}
		if other {
			o.Other++
		}
	}
	if o.Hit > 0 {
		o.Cover /= o.Hit
	}
	o.Hit /= float64(trials)
	o.Other /= float64(trials)
	return o
}

// driftOutcome: how often a series measured across two sessions, the
// second on a machine slower by a drift, had a change point marked
// (Marked), was refused by CheckDrift (Refused), and was marked and not
// refused (Through: a false change point that reaches the reader).
type driftOutcome struct{ Marked, Refused, Through float64 }

// simDrift plays an A/A release line of 6 builds × 5 repeats measured in
// two sessions (builds 0-2, then 3-5), the second slower by drift, with
// the control build re-run controls times in each.
func simDrift(tb testing.TB, pool cpPool, drift float64, controls, trials int, seed uint64) driftOutcome {
	rng := rand.New(rand.NewPCG(seed, uint64(controls)<<32|uint64(drift*1000)))
	cfg := DefaultChangeConfig(pool.better)
	var o driftOutcome
	for t := 0; t < trials; t++ {
		series := make([]SeriesPoint, 6)
		for b := range series {
			f := 1.0
			if b >= 3 {
				f = 1 - drift
			}
			series[b] = SeriesPoint{Label: fmt.Sprint("b", b), Values: pool.draw(rng, 5, f)}
		}
		control := []SeriesPoint{{Label: "session 1", Values: pool.draw(rng, controls, 1)}, {Label: "session 2", Values: pool.draw(rng, controls, 1-drift)}}
		cps, err := ChangePoints(series, cfg, rng)
		if err != nil {
			tb.Fatal(err)
		}
		_, err = CheckDrift(control, DefaultDriftConfig(), rng)
		if err != nil && !errors.Is(err, ErrNotComparable) {
			tb.Fatal(err)
		}
		marked, refused := len(cps) > 0, err != nil
		if marked {
			o.Marked++
		}
		if refused {
			o.Refused++
		}
		if marked && !refused {
			o.Through++
		}
	}
	n := float64(trials)
	return driftOutcome{o.Marked / n, o.Refused / n, o.Through / n}
}

var cpSteps = []float64{0.05, 0.10, 0.15, 0.20, 0.30}

// cpTables measures every metric, number of repeats and step, and the
// sessions with drift, as Markdown.
func cpTables(tb testing.TB, pools []cpPool, trials int) string {
	var b strings.Builder
	b.WriteString("| metric (recorded A/A runs) | repeats | P(false change point), A/A |")
	for _, s := range cpSteps {
		fmt.Fprintf(&b, " step −%g %%: found at its index |", 100*s)
	}
	b.WriteString(" step −20 %: another change point marked | step −20 %: interval holds the truth (of those found) |\n")
	b.WriteString("|---|---|---|" + strings.Repeat("---|", len(cpSteps)+2) + "\n")
	for _, p := range pools {
		for _, reps := range []int{3, 5, 10} {
			fmt.Fprintf(&b, "| %s | %d | %.3f |", p.name, reps, simChangePoints(tb, p, reps, 0, trials, 31).Other)
			var at20 cpOutcome
			for _, s := range cpSteps {
				o := simChangePoints(tb, p, reps, s, trials, 31)
				if s == 0.2 {
					at20 = o
				}
				fmt.Fprintf(&b, " %.3f |", o.Hit)
			}
			fmt.Fprintf(&b, " %.3f | %.3f |\n", at20.Other, at20.Cover)
		}
	}
	fmt.Fprintf(&b, "\n%d series a cell, 5 to 8 builds each.\n\n", trials)
	b.WriteString("| metric | drift between the sessions | P(change point marked) | control runs a session | P(refused by CheckDrift) | P(marked, not refused) |\n|---|---|---|---|---|---|\n")
	for _, p := range pools {
		for _, d := range []float64{0, 0.05, 0.10, 0.20} {
			what := "none"
			if d > 0 {
				what = fmt.Sprintf("−%g %%", 100*d)
			}
			for _, c := range []int{5, 10, 20} {
				o := simDrift(tb, p, d, c, trials, 31)
				fmt.Fprintf(&b, "| %s | %s | %.3f | %d | %.3f | %.3f |\n", p.name, what, o.Marked, c, o.Refused, o.Through)
			}
		}
	}
	fmt.Fprintf(&b, "\n%d series a cell, 6 builds × 5 repeats, builds 0-2 in one session and 3-5 in the next.\n", trials)
	return b.String()
}

// TestChangePointOperatingCharacteristic measures the method on series
// resampled from the A/A runs recorded on this machine. It fails when an
// A/A series of any metric is marked more than 5 % of the time; when a
// 20 % step in the saturation throughput with 5 repeats is found at its
// index less than 90 % of the time, or another change point is marked
// beside it more than 10 % of the time; when detection does not grow with
// the step; or when CheckDrift refuses an undrifted pair of sessions more
// than 10 % of the time, or a 20 % drift with 10 control runs a session
// less than 95 %. With -cptable FILE it measures every metric,
// step and number of repeats and writes the tables.
func TestChangePointOperatingCharacteristic(t *testing.T) {
	rec, err := ReadRecorded("testdata/aa-runs.json")
	if err != nil {
		t.Fatal(err)
	}
	pools := recordedPools(rec)
	if *cpTable != "" {
		table := cpTables(t, pools, 2000)
		t.Logf("recorded: %s\n%s", rec.Source, table)
		if err := os.WriteFile(*cpTable, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trials := 1000
	if testing.Short() {
		trials = 300
	}
	for _, p := range pools {
		for _, reps := range []int{3, 5} {
			o := simChangePoints(t, p, reps, 0, trials, 31)
			t.Logf("%s, %d repeats: A/A false-alarm rate %.3f over %d series", p.name, reps, o.Other, trials)
			if o.Other > 0.05 {
				t.Errorf("%s, %d repeats: A/A series marked %.3f of the time (max 0.05)", p.name, reps, o.Other)
			}
		}
	}
	sat := pools[0]
	prev := 0.0
	for _, s := range []float64{0.1, 0.2, 0.3} {
		o := simChangePoints(t, sat, 5, s, trials, 31)
		t.Logf("%s, 5 repeats, step −%g %%: found at its index %.3f, another marked %.3f, interval holds the truth %.3f", sat.name, 100*s, o.Hit, o.Other, o.Cover)
		if o.Hit < prev {
			t.Errorf("step −%g %%: found %.3f of the time, less than the smaller step's %.3f", 100*s, o.Hit, prev)
		}
		prev = o.Hit
		if s == 0.2 && o.Hit < 0.9 {
			t.Errorf("a 20 %% step in %s with 5 repeats found at its index %.3f of the time (min 0.90)", sat.name, o.Hit)
		}
		if s == 0.2 && o.Other > 0.1 {
			t.Errorf("a 20 %% step in %s with 5 repeats: another change point marked %.3f of the time (max 0.10)", sat.name, o.Other)
		}
	}
	for _, c := range []int{5, 10} {
		for _, d := range []float64{0, 0.2} {
			o := simDrift(t, sat, d, c, trials, 31)
			t.Logf("%s, sessions %g %% apart, %d control runs each: marked %.3f, refused %.3f, marked and not refused %.3f", sat.name, 100*d, c, o.Marked, o.Refused, o.Through)
			if d == 0 && o.Refused > 0.1 {
				t.Errorf("no drift, %d control runs a session: refused %.3f of the time (max 0.10)", c, o.Refused)
			}
			if d > 0 && c == 10 && o.Refused < 0.95 {
				t.Errorf("a 20 %% drift, %d control runs a session: refused %.3f of the time (min 0.95)", c, o.Refused)
			}
		}
	}
}
