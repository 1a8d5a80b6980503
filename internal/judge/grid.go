package judge

import (
	"fmt"
	"sort"
)

// Point is one (c, r) of a grid with all its repeats judged.
type Point struct {
	Connections int     `json:"connections"`
	Rate        float64 `json:"rate"`
	Offered     float64 `json:"offered"`
	State       State   `json:"state"`
	Repeats     int     `json:"repeats"`
	NSaturated  int     `json:"saturated_repeats"`
	NInvalid    int     `json:"invalid_repeats"`
	// Spreads over the valid repeats.
	TPS       Spread `json:"tps"`
	Committed Spread `json:"committed"`
	P50Ms     Spread `json:"latency_p50_ms"`
	P99Ms     Spread `json:"latency_p99_ms"`
}

// Line is one connection count's walk up the rates.
type Line struct {
	Connections int `json:"connections"`
	// Sustainable is the highest rate below the first saturated or invalid
	// one (0: even the lowest rate failed).
	Sustainable float64 `json:"sustainable_rate"`
	// StoppedAt is the first rate that was not OK and its state ("" when
	// every rate was OK).
	StoppedAt    float64 `json:"stopped_at_rate,omitempty"`
	StoppedState State   `json:"stopped_state,omitempty"`
}

// Grid is the verdict over a c x r grid.
type Grid struct {
	Rule          string  `json:"rule"`
	PointRule     string  `json:"point_rule"`
	PointChoice   string  `json:"choice_rule"`
	BaselineP50Ms float64 `json:"baseline_p50_ms"`
	Points        []Point `json:"points"` // by connections, then rate
	Lines         []Line  `json:"lines"`
	// Chosen is the saturation point: nil when no point is sustainable.
	Chosen *Point `json:"chosen,omitempty"`
}

// JudgeGrid judges every cell, folds repeats into points and finds the
// saturation point: per connection count, the highest rate below the first
// saturated (or invalid) one; overall, the sustainable point with the highest
// offered load (the fewest connections on a tie).
func (r Rule) JudgeGrid(cells []Cell) Grid {
	verdicts, base := r.JudgeAll(cells)
	type key struct {
		c int
		r float64
	}
	idx := map[key]int{}
	var pts []Point
	var tps, com, p50, p99 [][]float64
	for i, c := range cells {
		k := key{c.Connections, c.Rate}
		j, ok := idx[k]
		if !ok {
			j = len(pts)
			idx[k] = j
			pts = append(pts, Point{Connections: c.Connections, Rate: c.Rate, Offered: c.Offered})
			tps, com, p50, p99 = append(tps, nil), append(com, nil), append(p50, nil), append(p99, nil)
		}
		p := &pts[j]
		p.Repeats++
		switch verdicts[i].State {
		case Invalid:
			p.NInvalid++
			continue
		case Saturated:
			p.NSaturated++
		}
		tps[j] = append(tps[j], c.TPS)
		com[j] = append(com[j], float64(c.Committed))
		p50[j] = append(p50[j], c.P50Ms)
		p99[j] = append(p99[j], c.P99Ms)
	}
	for j := range pts {
		p := &pts[j]
		p.TPS, p.Committed, p.P50Ms, p.P99Ms = SpreadOf(tps[j]), SpreadOf(com[j]), SpreadOf(p50[j]), SpreadOf(p99[j])
		valid := p.Repeats - p.NInvalid
		switch {
		case valid == 0:
			p.State = Invalid
		case 2*p.NSaturated >= valid:
			p.State = Saturated
		default:
			p.State = OK
		}
	}
	sort.Slice(pts, func(a, b int) bool {
		if pts[a].Connections != pts[b].Connections {
			return pts[a].Connections < pts[b].Connections
		}
		return pts[a].Rate < pts[b].Rate
	})
	g := Grid{
		Rule:          r.String(),
		PointRule:     "a point (c, r) is saturated when at least half of its valid repeats are, invalid when none is valid",
		PointChoice:   "per c, the highest r below the first saturated or invalid r; the saturation point is the one of those with the highest offered load (fewest connections on a tie)",
		BaselineP50Ms: base,
		Points:        pts,
	}
	var chosen *Point
	for i := 0; i < len(pts); {
		c := pts[i].Connections
		line := Line{Connections: c}
		var best *Point
		stopped := false
		for ; i < len(pts) && pts[i].Connections == c; i++ {
			p := &pts[i]
			if stopped {
				continue
			}
			if p.State != OK {
				line.StoppedAt, line.StoppedState, stopped = p.Rate, p.State, true
				continue
			}
			best = p
			line.Sustainable = p.Rate
		}
		g.Lines = append(g.Lines, line)
		if best != nil && (chosen == nil || best.Offered > chosen.Offered) {
			chosen = best
		}
	}
	if chosen != nil {
		cp := *chosen
		g.Chosen = &cp
	}
	return g
}

// Describe says the saturation point in one line.
func (g Grid) Describe() string {
	if g.Chosen == nil {
		return "no sustainable point: every connection count failed at its lowest rate"
	}
	p := g.Chosen
	s := fmt.Sprintf("saturation point: c=%d x r=%g tx/s (offered %g tx/s), committed %.1f tx/s", p.Connections, p.Rate, p.Offered, p.TPS.Mean)
	if p.TPS.N > 1 {
		s += fmt.Sprintf(" (mean of %d repeats, sd %.1f, min %.1f, max %.1f)", p.TPS.N, p.TPS.SD, p.TPS.Min, p.TPS.Max)
	}
	for _, l := range g.Lines {
		if l.Connections == p.Connections && l.StoppedAt == 0 {
			// Nothing above it failed: a lower bound, not the point.
			s += fmt.Sprintf("; no rate failed at c=%d, so saturation lies at or above it: extend the rates", p.Connections)
		}
	}
	return s
}
