package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func init() {
	Register("sweep", func() Config { return DefaultSweep() })
}

// Sweep measures a c x r grid of loads (or searches the saturation rate) on
// one testnet. Every field is also a flag of `benchnet sweep`; sweep.json
// records it as the rundir.SweepConfig it is.
type Sweep rundir.SweepConfig

// DefaultSweep is the QA grid scaled to one machine.
func DefaultSweep() *Sweep {
	r := judge.DefaultRule()
	return &Sweep{
		Connections:   []int{1, 2, 4},
		Rates:         []float64{100, 200, 400, 800},
		Duration:      rundir.Duration{Duration: 30 * time.Second},
		Repeats:       1,
		Cooldown:      rundir.Duration{Duration: time.Minute},
		MinCommitted:  r.MinCommitted,
		LatencyFactor: r.LatencyFactor,
		// The search (issue 21): a light first probe (the latency rule's
		// baseline), a x4 ramp, one run where the outcome is clear and at
		// most 3 near the threshold; `benchnet sweep --search` runs each
		// probe on a fresh testnet.
		StartRate:   200,
		MinRate:     10,
		MaxRate:     2000,
		Precision:   0.05,
		MinRepeats:  2,
		MaxRepeats:  3,
		Budget:      20,
		Growth:      4,
		ClearMargin: 0.05,
	}
}

// Kind implements Config.
func (s *Sweep) Kind() string { return "sweep" }

// Rule is the saturation rule the sweep judges with.
func (s *Sweep) Rule() judge.Rule { return (*rundir.SweepConfig)(s).Rule() }

// SearchConfig is the search's stopping rule.
func (s *Sweep) SearchConfig() judge.Search { return (*rundir.SweepConfig)(s).SearchConfig() }

// Validate implements Config. Each error is a *manifest.FieldError naming
// the field (file and line unset: the caller knows where the field came from).
func (s *Sweep) Validate() []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &manifest.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	// The judge names its fields as "field: message".
	addJudge := func(jerrs []error) {
		for _, e := range jerrs {
			field, msg, _ := strings.Cut(e.Error(), ": ")
			add(field, "%s", msg)
		}
	}
	if len(s.Connections) == 0 {
		add("connections", "give at least one connection count")
	}
	seenC := map[int]bool{}
	for _, c := range s.Connections {
		if c < 1 || c > 1000 {
			add("connections", "%d: want 1 to 1000", c)
		}
		if seenC[c] {
			add("connections", "%d given twice", c)
		}
		seenC[c] = true
	}
	if s.Duration.Duration < time.Second {
		add("duration", "%s: want at least 1s per cell", s.Duration.Duration)
	}
	seenD := map[time.Duration]bool{}
	for _, d := range s.Durations {
		if d.Duration < time.Second {
			add("durations", "%s: want at least 1s per cell", d.Duration)
		}
		if seenD[d.Duration] {
			add("durations", "%s given twice", d.Duration)
		}
		seenD[d.Duration] = true
	}
	if s.Cooldown.Duration <= 0 {
		add("cooldown", "%s: want a positive bound", s.Cooldown.Duration)
	}
	addJudge(s.Rule().Validate())
	if s.Search {
		if len(s.Connections) > 1 {
			add("connections", "a search runs at one connection count, got %d", len(s.Connections))
		}
		if len(s.Rates) > 0 {
			add("rates", "a search picks its own rates: give start_rate, min_rate and max_rate instead")
		}
		if len(s.Durations) > 0 {
			add("durations", "a search probes at one duration: give duration instead")
		}
		addJudge(s.SearchConfig().Validate())
		return errs
	}
	if len(s.Rates) == 0 {
		add("rates", "give at least one rate")
	}
	seenR := map[float64]bool{}
	for _, r := range s.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			add("rates", "%v: want a positive finite rate (tx/s per connection)", r)
		}
		if seenR[r] {
			add("rates", "%v given twice", r)
		}
		seenR[r] = true
	}
	if s.Repeats < 1 || s.Repeats > 100 {
		add("repeats", "%d: want 1 to 100", s.Repeats)
	}
	return errs
}

// CellLoad is the load of one cell: the manifest's load with the cell's
// connections, rate and duration, always a constant shape over a duration.
func (s *Sweep) CellLoad(base manifest.Load, c int, r float64) manifest.Load {
	l := base
	l.Connections, l.Rate = c, r
	l.Duration, l.Count = s.Duration, 0
	l.Shape, l.RampFrom = "constant", 0
	return l
}

// Order returns the grid's cells in the order they run: each repeat is the
// whole grid shuffled by a generator seeded from seed and the repeat number,
// so load does not follow time, repeats are interleaved, and the same seed
// gives the same order.
func (s *Sweep) Order(seed int64) []rundir.SweepCell {
	var out []rundir.SweepCell
	for rep := 1; rep <= s.Repeats; rep++ {
		var block []rundir.SweepCell
		variants := s.Variants
		if len(variants) == 0 {
			variants = []string{""}
		}
		durations := make([]*rundir.Duration, len(s.Durations))
		for i := range s.Durations {
			durations[i] = &s.Durations[i]
		}
		if len(durations) == 0 {
			durations = []*rundir.Duration{nil}
		}
		for _, v := range variants {
			for _, d := range durations {
				for _, c := range s.Connections {
					for _, r := range s.Rates {
						block = append(block, rundir.SweepCell{Variant: v, Duration: d, Connections: c, Rate: r, Repeat: rep})
					}
				}
			}
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 0x7377656570+uint64(rep))) // "sweep"
		rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		out = append(out, block...)
	}
	for i := range out {
		out[i].Order = i + 1
		out[i].Status = rundir.CellPending
		out[i].ID = cellID(out[i])
	}
	return out
}

func cellID(c rundir.SweepCell) string {
	if c.Probe > 0 {
		return fmt.Sprintf("%03d-probe%d-c%d-r%g-%d", c.Order, c.Probe, c.Connections, c.Rate, c.Repeat)
	}
	v, d := "", ""
	if c.Variant != "" {
		v = "-" + c.Variant
	}
	if c.Duration != nil {
		d = "-d" + c.Duration.String()
	}
	return fmt.Sprintf("%03d%s-c%d-r%g%s-%d", c.Order, v, c.Connections, c.Rate, d, c.Repeat)
}
