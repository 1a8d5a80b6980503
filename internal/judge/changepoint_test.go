package judge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// noisy is a series of builds at the given levels, each with reps
// repeats spread by a fixed pattern (sd ~2 %), shifted from build to
// build so no two builds repeat the same values.
func noisy(levels []float64, reps int) []SeriesPoint {
	pat := []float64{0.97, 1.02, 0.99, 1.03, 1.0, 0.98, 1.01, 0.995, 1.025, 0.985}
	out := make([]SeriesPoint, len(levels))
	for b, l := range levels {
		out[b].Label = fmt.Sprint("b", b)
		for r := 0; r < reps; r++ {
			out[b].Values = append(out[b].Values, l*pat[(r+3*b)%len(pat)])
		}
	}
	return out
}

func flat(n, reps int, v float64) []SeriesPoint {
	out := make([]SeriesPoint, n)
	for b := range out {
		out[b].Label = fmt.Sprint("b", b)
		for r := 0; r < reps; r++ {
			out[b].Values = append(out[b].Values, v)
		}
	}
	return out
}

func TestChangePoints(t *testing.T) {
	type want struct {
		index     int
		ratio     float64 // within 3 %
		direction string
	}
	hi, lo := DefaultChangeConfig(HigherIsBetter), DefaultChangeConfig(LowerIsBetter)
	noMin := hi
	noMin.MinEffect = 0
	twoBuilds := hi
	twoBuilds.MinBuilds = 2
	for _, tc := range []struct {
		name   string
		series []SeriesPoint
		cfg    ChangeConfig
		want   []want
	}{
		{"empty series", nil, hi, nil},
		{"one point", noisy([]float64{100}, 5), hi, nil},
		{"constant series", flat(6, 4, 100), hi, nil},
		{"noise only", noisy([]float64{100, 100, 100, 100, 100, 100}, 5), hi, nil},
		{"one clear step", noisy([]float64{100, 100, 100, 75, 75, 75}, 5), hi, []want{{3, 0.75, "worse"}}},
		{"a step up is better", noisy([]float64{100, 100, 100, 125, 125, 125}, 5), hi, []want{{3, 1.25, "better"}}},
		{"two steps", noisy([]float64{100, 100, 130, 130, 90, 90}, 5), hi, []want{{2, 1.3, "better"}, {4, 0.69, "worse"}}},
		{"the newest build alone", noisy([]float64{100, 100, 100, 100, 100, 80}, 5), hi, []want{{5, 0.8, "worse"}}},
		{"lower is better: latency up is worse", noisy([]float64{1000, 1000, 1000, 1300, 1300, 1300}, 4), lo, []want{{3, 1.3, "worse"}}},
		{"lower is better: latency down is better", noisy([]float64{1000, 1000, 1000, 700, 700, 700}, 4), lo, []want{{3, 0.7, "better"}}},
		// A 3 % step, resolved by 10 repeats of 2 % noise, is below the
		// minimum effect; without it the same step is marked.
		{"a small step is not marked", noisy([]float64{100, 100, 100, 97, 97, 97}, 10), hi, nil},
		{"a small step with no minimum effect", noisy([]float64{100, 100, 100, 97, 97, 97}, 10), noMin, []want{{3, 0.97, "worse"}}},
		{"three repeats", noisy([]float64{100, 100, 100, 70, 70}, 3), hi, []want{{3, 0.7, "worse"}}},
		// Segments of two builds at least: a step at the newest build is
		// placed one build early, the only split allowed near it.
		{"minimum segment", noisy([]float64{100, 100, 100, 100, 100, 80}, 5), twoBuilds, []want{{4, 0.89, "worse"}}},
		// One run a build: 6 values split 3 | 3 are arranged 20 ways, and
		// the step's arrangement and its mirror are 2 of them, p ≥ 0.1:
		// no step can be marked. With 10 builds, p is about 2/252.
		{"one run a build, 6 builds", noisy([]float64{100, 100, 100, 60, 60, 60}, 1), hi, nil},
		{"one run a build, 10 builds", noisy([]float64{100, 100, 100, 100, 100, 60, 60, 60, 60, 60}, 1), hi, []want{{5, 0.6, "worse"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChangePoints(tc.series, tc.cfg, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d change points %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				c := got[i]
				if c.Index != w.index || c.Direction != w.direction {
					t.Errorf("change point %d: index %d %s, want %d %s (%+v)", i, c.Index, c.Direction, w.index, w.direction, c)
				}
				if math.Abs(c.Ratio/w.ratio-1) > 0.03 {
					t.Errorf("change point %d: ratio %.3f, want %.3f", i, c.Ratio, w.ratio)
				}
				if !(c.Lo <= c.Ratio && c.Ratio <= c.Hi) || (c.Lo <= 1 && 1 <= c.Hi) {
					t.Errorf("change point %d: interval [%.3f, %.3f] around %.3f should exclude 1", i, c.Lo, c.Hi, c.Ratio)
				}
				if c.P > tc.cfg.Alpha || c.P <= 0 {
					t.Errorf("change point %d: p %g, want in (0, %g]", i, c.P, tc.cfg.Alpha)
				}
				if c.Before != tc.series[c.Index-1].Label || c.After != tc.series[c.Index].Label {
					t.Errorf("change point %d: between %q and %q, want the labels of points %d and %d", i, c.Before, c.After, c.Index-1, c.Index)
				}
			}
		})
	}
}

func TestChangePointsRejects(t *testing.T) {
	good := noisy([]float64{100, 100, 100, 75, 75}, 3)
	bad := func(v float64) []SeriesPoint {
		s := noisy([]float64{100, 100, 100, 75, 75}, 3)
		s[2].Values[1] = v
		return s
	}
	cfg := DefaultChangeConfig(HigherIsBetter)
	with := func(f func(*ChangeConfig)) ChangeConfig {
		c := cfg
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name   string
		series []SeriesPoint
		cfg    ChangeConfig
		rng    *rand.Rand
		says   string
	}{
		{"NaN", bad(math.NaN()), cfg, nil, "point 2 (b2): value 1 is NaN"},
		{"zero", bad(0), cfg, nil, "value 1 is 0"},
		{"negative", bad(-3), cfg, nil, "value 1 is -3"},
		{"infinite", bad(math.Inf(1)), cfg, nil, "value 1 is +Inf"},
		{"a point without values", append(good[:2:2], SeriesPoint{Label: "empty"}), cfg, nil, "point 2 (empty): no values"},
		{"no direction", good, with(func(c *ChangeConfig) { c.Better = 0 }), nil, "direction"},
		{"level 1", good, with(func(c *ChangeConfig) { c.Level = 1 }), nil, "level 1"},
		{"alpha 0", good, with(func(c *ChangeConfig) { c.Alpha = 0 }), nil, "significance"},
		{"too few permutations", good, with(func(c *ChangeConfig) { c.Permutations = 20 }), nil, "permutations"},
		{"negative minimum effect", good, with(func(c *ChangeConfig) { c.MinEffect = -0.1 }), nil, "minimum effect"},
		{"no minimum segment", good, with(func(c *ChangeConfig) { c.MinBuilds = 0 }), nil, "minimum segment"},
		{"no random source", good, cfg, nil, "random"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			if tc.name == "no random source" {
				rng = nil
			}
			got, err := ChangePoints(tc.series, tc.cfg, rng)
			if err == nil {
				t.Fatalf("no error, change points %+v", got)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

func TestChangePointsDeterministic(t *testing.T) {
	s := noisy([]float64{100, 100, 130, 130, 90, 90, 90}, 4)
	cfg := DefaultChangeConfig(HigherIsBetter)
	a, err := ChangePoints(s, cfg, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ChangePoints(s, cfg, rand.New(rand.NewPCG(7, 7)))
	if len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different answers:\n%+v\n%+v", a, b)
	}
}

func TestCheckDrift(t *testing.T) {
	slots := func(levels ...float64) []SeriesPoint {
		s := noisy(levels, 5)
		for i := range s {
			s[i].Label = fmt.Sprint("session ", i+1)
		}
		return s
	}
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(3, 4)) }

	d, err := CheckDrift(slots(100, 100, 100, 100), DefaultDriftConfig(), rng())
	if err != nil {
		t.Fatalf("a steady control refused: %v", err)
	}
	if d.Drifted || d.From != "session 1" || d.To != "session 4" || math.Abs(d.Ratio-1) > 0.03 || !(d.Lo < 1 && 1 < d.Hi) {
		t.Errorf("steady control: %+v, want no drift from session 1 to 4, ratio ~1 with an interval around it", d)
	}

	d, err = CheckDrift(slots(100, 100, 85, 85), DefaultDriftConfig(), rng())
	if !errors.Is(err, ErrNotComparable) {
		t.Fatalf("a control 15 %% slower from session 3 on: error %v, want ErrNotComparable", err)
	}
	if !d.Drifted || d.From != "session 2" || d.To != "session 3" || math.Abs(d.Ratio-0.85) > 0.02 || d.Hi >= 1 {
		t.Errorf("drifted control: %+v", d)
	}
	for _, s := range []string{"machine drifted by -15", "between session 2 and session 3", "not comparable"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}

	bad := slots(100, 100)
	bad[1].Values[0] = math.NaN()
	if _, err := CheckDrift(bad, DefaultDriftConfig(), rng()); err == nil || errors.Is(err, ErrNotComparable) {
		t.Errorf("a NaN in the control: error %v, want a bad-input error", err)
	}
	if d, err := CheckDrift(nil, DefaultDriftConfig(), rng()); err != nil || d.Drifted {
		t.Errorf("no control: %+v, %v; want nothing to say", d, err)
	}
}
