package experiment

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func init() {
	Register("soak", func() Config { return DefaultSoak() })
}

// Soak is one long constant load, judged for throughput decay.
type Soak struct {
	Rate        float64         `toml:"rate" json:"rate"` // tx/s per connection
	Connections int             `toml:"connections" json:"connections"`
	Duration    rundir.Duration `toml:"duration" json:"duration"`
	// Bootstrap resamples of the decay fit's intervals.
	Bootstrap int `toml:"bootstrap" json:"bootstrap"`
}

// DefaultSoak is tm-bench's sustained-load test scaled to one machine.
func DefaultSoak() *Soak {
	return &Soak{Rate: 200, Connections: 1, Duration: rundir.Duration{Duration: 10 * time.Minute}, Bootstrap: 200}
}

// Kind implements Config.
func (s *Soak) Kind() string { return "soak" }

// Validate implements Config.
func (s *Soak) Validate() []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &manifest.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !(s.Rate > 0) || math.IsInf(s.Rate, 0) {
		add("rate", "%v: want a positive finite rate (tx/s per connection)", s.Rate)
	}
	if s.Connections < 1 || s.Connections > 1000 {
		add("connections", "%d: want 1 to 1000", s.Connections)
	}
	if s.Duration.Duration < 30*time.Second {
		add("duration", "%s: a decay needs at least 30s of load", s.Duration.Duration)
	}
	if s.Bootstrap < 20 || s.Bootstrap > 100000 {
		add("bootstrap", "%d: want 20 to 100000 resamples", s.Bootstrap)
	}
	return errs
}

// Load is the soak's load over the manifest's.
func (s *Soak) Load(base manifest.Load) manifest.Load {
	l := base
	l.Rate, l.Connections = s.Rate, s.Connections
	l.Duration, l.Count = s.Duration, 0
	l.Shape, l.RampFrom = "constant", 0
	return l
}

// ThroughputSeries is committed tx/s per second of block time: each
// block's run txs spread evenly over the interval since the previous block,
// summed into 1 s bins from the start of the first run block's interval;
// the last, partial bin is left out. It reads blocks.csv (time_ns and
// run_txs columns).
func ThroughputSeries(runDir string) (t, tps []float64, err error) {
	rows, _, err := rundir.BlocksCSV.ReadFile(filepath.Join(runDir, rundir.BlocksCSV.Name))
	if err != nil {
		return nil, nil, err
	}
	type blk struct {
		ns int64
		n  int
	}
	// A cut last line (interrupted run) is left out by the decoder.
	blocks := make([]blk, 0, len(rows))
	for _, b := range rows {
		blocks = append(blocks, blk{b.TimeNs, b.RunTxs})
	}
	first, last := -1, -1
	for i, b := range blocks {
		if b.n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil, nil, errors.New("no block holds a run tx")
	}
	// A block's txs were committed over the interval since the block before
	// it: spreading them over that interval gives a rate per second that
	// does not alias 1.2 s blocks onto 1 s bins (0 or 2 blocks per bin).
	if first == 0 {
		first = 1 // no interval for the very first block: drop its txs
		if first > last {
			return nil, nil, errors.New("run txs in one block only")
		}
	}
	t0 := blocks[first-1].ns
	bins := int((blocks[last].ns - t0) / 1e9)
	if bins < 1 {
		return nil, nil, errors.New("run txs span less than one second of block time")
	}
	rate := make([]float64, bins)
	for i := first; i <= last; i++ {
		a, b := float64(blocks[i-1].ns-t0)/1e9, float64(blocks[i].ns-t0)/1e9
		if b <= a || blocks[i].n == 0 {
			continue
		}
		per := float64(blocks[i].n) / (b - a)
		for k := int(a); k < bins && float64(k) < b; k++ {
			lo, hi := math.Max(a, float64(k)), math.Min(b, float64(k+1))
			if hi > lo {
				rate[k] += per * (hi - lo)
			}
		}
	}
	for i := range rate {
		t = append(t, float64(i))
	}
	return t, rate, nil
}

// AnalyzeSoak fits the decay of a soak run's throughput and writes
// soak.json into the run directory; the bootstrap is seeded from seed, so
// the same run gives the same file.
func AnalyzeSoak(runDir string, seed int64, bootstrap int) (*rundir.SoakResult, error) {
	t, y, err := ThroughputSeries(runDir)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	// A 1 s bin holds 0 or 2 blocks' txs now and then (1.2 s blocks): the
	// fit smooths that; it is noise around the trend, not a trend.
	fit, err := judge.FitDecay(t, y, judge.DecayConfig{Bootstrap: bootstrap, Seed: uint64(seed)})
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	res := &rundir.SoakResult{SchemaVersion: rundir.SoakSchema, T: t, TPS: y, Fit: fit}
	if err := rundir.SoakRecord.Write(runDir, res); err != nil {
		return nil, err
	}
	return res, nil
}
