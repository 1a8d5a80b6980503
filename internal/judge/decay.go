package judge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Decay is the fit of tx/s(t) = A + B·exp(−t/Tau) to a throughput series.
type Decay struct {
	Rule string  `json:"rule"`
	N    int     `json:"n"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	Tau  float64 `json:"tau_sec"`
	RMSE float64 `json:"rmse"`
	// Decays is the verdict: B significantly > 0 and Tau inside the window.
	Decays bool `json:"decays"`
	// HalfLife = Tau·ln 2, with its 95 % bootstrap interval (Decays only).
	HalfLife   float64 `json:"half_life_sec,omitempty"`
	HalfLifeLo float64 `json:"half_life_ci95_lo,omitempty"`
	HalfLifeHi float64 `json:"half_life_ci95_hi,omitempty"`
	BLo        float64 `json:"b_ci95_lo"`
	BHi        float64 `json:"b_ci95_hi"`
	Verdict    string  `json:"verdict"`
}

// DecayConfig tunes FitDecay.
type DecayConfig struct {
	Bootstrap int    // resamples (default 200)
	Seed      uint64 // of the bootstrap, so a fit is reproducible
}

// FitDecay fits tx/s(t) = a + b·exp(−t/τ) by least squares. For a fixed τ
// the model is linear in a and b, so τ is searched (a log grid, then a
// golden-section refinement) with a, b solved exactly at each τ. The 95 %
// intervals of b and of the half-life τ·ln2 come from a residual bootstrap.
// "No decay" when b's interval reaches 0 or τ falls outside [spacing,
// window]: a τ beyond the window is a straight line, not a decay we saw.
func FitDecay(t, y []float64, cfg DecayConfig) (Decay, error) {
	if len(t) != len(y) {
		return Decay{}, fmt.Errorf("decay fit: %d times but %d values", len(t), len(y))
	}
	n := len(t)
	if n < 6 {
		return Decay{}, fmt.Errorf("decay fit: %d points, at least 6 needed", n)
	}
	for i := range t {
		if math.IsNaN(t[i]) || math.IsNaN(y[i]) || math.IsInf(t[i], 0) || math.IsInf(y[i], 0) {
			return Decay{}, errors.New("decay fit: a time or value is not a finite number")
		}
		if i > 0 && t[i] <= t[i-1] {
			return Decay{}, fmt.Errorf("decay fit: times not increasing at point %d", i)
		}
	}
	if cfg.Bootstrap <= 0 {
		cfg.Bootstrap = 200
	}
	window := t[n-1] - t[0]
	spacing := window / float64(n-1)
	tauMin, tauMax := spacing/4, 20*window
	d := Decay{N: n}
	d.Rule = fmt.Sprintf("tx/s(t) = a + b*exp(-t/tau) fitted by least squares; decay when the 95 %% interval of b (residual bootstrap, %d resamples, seed %d) is above 0 "+
		"and tau lies within [%.3g s, %.3g s] (the sample spacing and the window); half-life = tau*ln2 with its 95 %% bootstrap interval",
		cfg.Bootstrap, cfg.Seed, spacing, window)

	t0 := t[0]
	ts := make([]float64, n)
	for i := range t {
		ts[i] = t[i] - t0
	}
	a, b, tau, sse := fitExp(ts, y, tauMin, tauMax)
	d.A, d.B, d.Tau = a, b, tau
	d.RMSE = math.Sqrt(sse / float64(n))

	fit := make([]float64, n)
	res := make([]float64, n)
	for i := range ts {
		fit[i] = a + b*math.Exp(-ts[i]/tau)
		res[i] = y[i] - fit[i]
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6465636179)) // "decay"
	ystar := make([]float64, n)
	var bs, hs []float64
	for k := 0; k < cfg.Bootstrap; k++ {
		for i := range ystar {
			ystar[i] = fit[i] + res[rng.IntN(n)]
		}
		_, bb, tt, _ := fitExp(ts, ystar, tauMin, tauMax)
		bs = append(bs, bb)
		hs = append(hs, tt*math.Ln2)
	}
	sort.Float64s(bs)
	sort.Float64s(hs)
	d.BLo, d.BHi = quantile(bs, 0.025), quantile(bs, 0.975)
	switch {
	case d.BLo <= 0:
		d.Verdict = fmt.Sprintf("no decay: b = %.3g, its 95 %% interval [%.3g, %.3g] reaches 0", b, d.BLo, d.BHi)
	case tau < spacing:
		d.Verdict = fmt.Sprintf("no decay: tau = %.3g s is shorter than the sample spacing (%.3g s): a step at the start, not a decay", tau, spacing)
	case tau > window:
		d.Verdict = fmt.Sprintf("no decay: tau = %.3g s is longer than the window (%.3g s): a slope, not a decay that finished", tau, window)
	default:
		d.Decays = true
		d.HalfLife = tau * math.Ln2
		d.HalfLifeLo, d.HalfLifeHi = quantile(hs, 0.025), quantile(hs, 0.975)
		d.Verdict = fmt.Sprintf("decays from %.1f to %.1f tx/s with half-life %.0f s (95 %% interval %.0f-%.0f s)",
			a+b, a, d.HalfLife, d.HalfLifeLo, d.HalfLifeHi)
	}
	return d, nil
}

// fitExp returns the least-squares a, b, tau (tau in [lo, hi]) and the SSE.
func fitExp(t, y []float64, lo, hi float64) (a, b, tau, sse float64) {
	const steps = 120
	la, lb := math.Log(lo), math.Log(hi)
	best, bestI := math.Inf(1), 0
	sseAt := func(ltau float64) float64 {
		_, _, s := linFit(t, y, math.Exp(ltau))
		return s
	}
	for i := 0; i <= steps; i++ {
		if s := sseAt(la + (lb-la)*float64(i)/steps); s < best {
			best, bestI = s, i
		}
	}
	// Golden section between the grid neighbours of the best point.
	l := la + (lb-la)*float64(max(bestI-1, 0))/steps
	r := la + (lb-la)*float64(min(bestI+1, steps))/steps
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := r-g*(r-l), l+g*(r-l)
	f1, f2 := sseAt(x1), sseAt(x2)
	for k := 0; k < 60 && r-l > 1e-9; k++ {
		if f1 < f2 {
			r, x2, f2 = x2, x1, f1
			x1 = r - g*(r-l)
			f1 = sseAt(x1)
		} else {
			l, x1, f1 = x1, x2, f2
			x2 = l + g*(r-l)
			f2 = sseAt(x2)
		}
	}
	tau = math.Exp((l + r) / 2)
	a, b, sse = linFit(t, y, tau)
	return a, b, tau, sse
}

// linFit solves y = a + b·x, x = exp(−t/tau), by ordinary least squares.
func linFit(t, y []float64, tau float64) (a, b, sse float64) {
	n := float64(len(t))
	var sx, sy, sxx, sxy float64
	for i := range t {
		x := math.Exp(-t[i] / tau)
		sx += x
		sy += y[i]
		sxx += x * x
		sxy += x * y[i]
	}
	den := n*sxx - sx*sx
	if den <= 1e-12*n*sxx || den == 0 {
		// x is (nearly) constant: only the level is identifiable.
		a, b = sy/n, 0
	} else {
		b = (n*sxy - sx*sy) / den
		a = (sy - b*sx) / n
	}
	for i := range t {
		e := y[i] - a - b*math.Exp(-t[i]/tau)
		sse += e * e
	}
	return a, b, sse
}
