package linkem

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// CheckLateness checks the window [from, to] of a switch's series (zero
// times: from its first line / to its last). The window's histogram is the
// last line at or before from subtracted from the first line at or after to
// (a switch that started after from counts from zero).
func CheckLateness(series []rundir.LinkemLatenessSample, from, to time.Time, window string) rundir.LinkLateness {
	c := rundir.LinkLateness{Window: window, Met: true}
	if len(series) == 0 {
		c.Verdict = "no lateness record: nothing to check"
		return c
	}
	base := -1 // index of the base line; -1: zero histogram
	for i, s := range series {
		if !from.IsZero() && !s.Time.After(from) {
			base = i
		}
	}
	end := len(series) - 1
	if !to.IsZero() {
		for i := max(base, 0); i < len(series); i++ {
			if !series[i].Time.Before(to) {
				end = i
				break
			}
		}
	}
	if base < 0 && from.IsZero() {
		base = 0
	}
	var h Lateness
	var maxNs, minDelay int64
	first := 0
	if base >= 0 {
		h = sampleHist(&series[end]).Sub(sampleHist(&series[base]))
		c.From = series[base].Time
		first = base + 1
	} else {
		h = sampleHist(&series[end])
		c.From = series[0].Time
		first = 0
	}
	c.To = series[end].Time
	var scheds []string
	for i := first; i <= end && i < len(series); i++ {
		if s := series[i].Sched; s != "" && !slices.Contains(scheds, s) {
			scheds = append(scheds, s)
		}
		maxNs = max(maxNs, series[i].MaxNs)
		if d := series[i].MinDelayNs; d > 0 && (minDelay == 0 || d < minDelay) {
			minDelay = d
		}
	}
	if base >= 0 && series[base].MinDelayNs > 0 && (minDelay == 0 || series[base].MinDelayNs < minDelay) {
		minDelay = series[base].MinDelayNs // the conditions in effect at the start
	}
	c.Sched = strings.Join(scheds, ", ")
	h.Max = time.Duration(maxNs)
	bound := LatenessBound(time.Duration(minDelay))
	p99 := h.Quantile(0.99)
	c.Frames = h.Frames
	c.MeanMs, c.P50Ms, c.P99Ms, c.MaxMs = msOf(h.Mean()), msOf(h.Quantile(0.5)), msOf(p99), msOf(h.Max)
	c.SmallestDelayMs, c.BoundMs = msOf(time.Duration(minDelay)), msOf(bound)
	figures := fmt.Sprintf("p50 %.3f ms, p99 %.3f ms, max %.3f ms over %d delayed frames; bound: p99 ≤ %s",
		c.P50Ms, c.P99Ms, c.MaxMs, c.Frames, boundText(bound, time.Duration(minDelay)))
	switch {
	case h.Frames == 0:
		c.Verdict = "no delayed frame in the window: nothing to check"
	case p99 > bound:
		c.Met = false
		c.Verdict = "link emulator LATE: " + figures + "; emulated delays were longer than configured"
	default:
		c.Verdict = "link emulator on time: " + figures
	}
	return c
}

func boundText(bound, minDelay time.Duration) string {
	if minDelay == 0 || bound == LatenessFloor {
		return fmt.Sprintf("%.3f ms (the floor; smallest configured delay %.3f ms)", msOf(bound), msOf(minDelay))
	}
	return fmt.Sprintf("%.3f ms (%g %% of the smallest configured delay, %.3f ms)", msOf(bound), LatenessFraction*100, msOf(minDelay))
}

func msOf(d time.Duration) float64 { return float64(d.Round(time.Microsecond)) / 1e6 }
