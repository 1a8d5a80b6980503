package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
)

// Zoom is an axis range for the run report's time plots (`benchnet report
// --xrange 10s:20s --yrange 0:2s`), the cheaper of issue 23's two ways to
// let the reader zoom. A zero Range leaves its axis as the data set it.
type Zoom struct {
	X, Y Range
}

// Range is one axis range. Y in a duration is milliseconds and applies to
// the plots whose Y axis is a latency in ms; a plain number applies to
// every time plot in its own unit.
type Range struct {
	Set      bool
	Min, Max float64
	Duration bool // given as durations: X in s, Y in ms
	Text     string
}

// ParseRange reads "MIN:MAX": durations ("10s:20s", "0:2s", "500ms:1.5s")
// or plain numbers ("0:4000"). Either end may be empty ("10s:", ":2s")
// to keep the data's. axis names the flag in errors.
func ParseRange(axis, s string) (Range, error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return Range{}, fmt.Errorf("--%srange %q: want MIN:MAX, e.g. 10s:20s or 0:4000", axis, s)
	}
	r := Range{Set: true, Text: s, Min: nanMin, Max: nanMax}
	dur := strings.ContainsAny(s, "smhµu")
	parse := func(v string) (float64, error) {
		if v == "" {
			return 0, nil
		}
		if dur {
			if v == "0" {
				return 0, nil
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				return 0, err
			}
			if axis == "x" {
				return d.Seconds(), nil
			}
			return float64(d) / 1e6, nil
		}
		return strconv.ParseFloat(v, 64)
	}
	var err error
	if lo != "" {
		if r.Min, err = parse(lo); err != nil {
			return Range{}, fmt.Errorf("--%srange %q: %w", axis, s, err)
		}
	}
	if hi != "" {
		if r.Max, err = parse(hi); err != nil {
			return Range{}, fmt.Errorf("--%srange %q: %w", axis, s, err)
		}
	}
	if lo != "" && hi != "" && r.Max <= r.Min {
		return Range{}, fmt.Errorf("--%srange %q: the end must be above the start", axis, s)
	}
	r.Duration = dur
	return r, nil
}

// TimeAxis begins the X label of every time plot a run report draws: the
// plots Zoom applies to.
const TimeAxis = "time since start (s)"

// nanMin and nanMax mark an open end (the data's).
const (
	nanMin = -1e308
	nanMax = 1e308
)

func (z Zoom) Active() bool { return z.X.Set || z.Y.Set }

// Apply sets a time plot's axes to the zoom; other plots (the latency
// distribution) are left alone. It reports whether it changed p.
func (z Zoom) Apply(p *plot.Plot) bool {
	if !strings.HasPrefix(p.X.Label.Text, TimeAxis) {
		return false
	}
	changed := false
	if z.X.Set {
		if z.X.Min != nanMin {
			p.X.Min = z.X.Min
		}
		if z.X.Max != nanMax {
			p.X.Max = z.X.Max
		}
		changed = true
	}
	if z.Y.Set && (!z.Y.Duration || strings.Contains(p.Y.Label.Text, "(ms)")) {
		if z.Y.Min != nanMin {
			p.Y.Min = z.Y.Min
		}
		if z.Y.Max != nanMax {
			p.Y.Max = z.Y.Max
		}
		changed = true
	}
	return changed
}

// Note is the line the report opens its plots with when zoomed.
func (z Zoom) Note() string {
	var parts []string
	if z.X.Set {
		parts = append(parts, "time axes "+z.X.Text)
	}
	if z.Y.Set {
		what := "every time plot's Y axis"
		if z.Y.Duration {
			what = "latency Y axes"
		}
		parts = append(parts, what+" "+z.Y.Text)
	}
	return "**Zoomed** (`benchnet report --xrange/--yrange`): " + strings.Join(parts, ", ") + "; the run directory's own report shows the whole run."
}
