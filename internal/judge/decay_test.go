package judge

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func series(n int, f func(t float64) float64, noise float64, seed uint64) (ts, ys []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < n; i++ {
		t := float64(i)
		ts = append(ts, t)
		ys = append(ys, f(t)+noise*rng.NormFloat64())
	}
	return ts, ys
}

func TestFitDecay(t *testing.T) {
	// tm-bench's report: tx/s halves towards a floor with a half-life of
	// 200-300 s over a 600 s soak.
	tau := 250 / math.Ln2
	ts, ys := series(600, func(t float64) float64 { return 400 + 600*math.Exp(-t/tau) }, 20, 7)
	d, err := FitDecay(ts, ys, DecayConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Decays {
		t.Fatalf("no decay found: %s", d.Verdict)
	}
	if !(d.HalfLifeLo <= 250 && 250 <= d.HalfLifeHi) {
		t.Errorf("half-life %g [%g, %g] misses 250", d.HalfLife, d.HalfLifeLo, d.HalfLifeHi)
	}
	if math.Abs(d.HalfLife-250) > 25 || math.Abs(d.A-400) > 20 || math.Abs(d.B-600) > 30 {
		t.Errorf("fit a=%g b=%g half-life=%g, want 400, 600, 250", d.A, d.B, d.HalfLife)
	}
	if !strings.Contains(d.Rule, "bootstrap") || !strings.Contains(d.Verdict, "half-life") {
		t.Errorf("rule %q verdict %q", d.Rule, d.Verdict)
	}
	// Same seed, same fit.
	d2, _ := FitDecay(ts, ys, DecayConfig{Seed: 1})
	if d2 != d {
		t.Errorf("refit with the same seed differs: %+v vs %+v", d2, d)
	}
}

func TestFitDecayNoDecay(t *testing.T) {
	tests := []struct {
		name string
		f    func(t float64) float64
		want string
	}{
		{"flat", func(float64) float64 { return 800 }, "no decay: b ="},
		{"slow slope", func(t float64) float64 { return 800 - 0.1*t }, "no decay: tau"},
		{"rising", func(t float64) float64 { return 800 - 300*math.Exp(-t/60) }, "no decay: b ="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, ys := series(300, tt.f, 15, 3)
			d, err := FitDecay(ts, ys, DecayConfig{Seed: 1, Bootstrap: 100})
			if err != nil {
				t.Fatal(err)
			}
			if d.Decays || !strings.Contains(d.Verdict, tt.want) {
				t.Errorf("verdict %q (decays %v), want %q", d.Verdict, d.Decays, tt.want)
			}
		})
	}
}

func TestFitDecayBadInput(t *testing.T) {
	for name, in := range map[string][2][]float64{
		"too few":        {{0, 1, 2}, {1, 2, 3}},
		"not increasing": {{0, 1, 2, 2, 4, 5}, {1, 1, 1, 1, 1, 1}},
		"nan":            {{0, 1, 2, 3, 4, 5}, {1, math.NaN(), 1, 1, 1, 1}},
		"lengths":        {{0, 1, 2, 3, 4, 5, 6}, {1, 1, 1, 1, 1, 1}},
	} {
		if _, err := FitDecay(in[0], in[1], DecayConfig{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
