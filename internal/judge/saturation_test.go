package judge

import (
	"math"
	"strings"
	"testing"
)

func TestCompareSaturation(t *testing.T) {
	inf := math.Inf(1)
	iv := func(lo, hi float64) SaturationInterval { return SaturationInterval{Low: lo, High: hi} }
	tests := []struct {
		name       string
		base, cand SaturationInterval
		want       Outcome
		why        string
	}{
		// 1700/1900 = 0.895: below by more than 5 % wherever the points lie.
		{"regression", iv(1900, 1950), iv(1650, 1700), OutcomeRegression, "lower by more than 5 %"},
		// On the line: cand.High = base.Low x 0.95 is a regression.
		{"regression at the margin", iv(2000, 2050), iv(1850, 1900), OutcomeRegression, "-9.8 % to -5.0 %"},
		{"improvement", iv(1900, 1950), iv(2100, 2150), OutcomeImprovement, "higher by more than 5 %"},
		// max(1975/1900, 1950/1925) - 1 = 3.9 %: the same.
		{"same overlapping", iv(1900, 1950), iv(1925, 1975), OutcomeSame, "within 5 %"},
		// Adjacent intervals: 2000/1900 = +5.3 % possible: not the same.
		{"adjacent", iv(1900, 1950), iv(1950, 2000), OutcomeInconclusive, "both a change within 5 % and beyond"},
		// Lower, but 1850/1900 = -2.6 % is allowed too: inconclusive.
		{"lower but not by the margin", iv(1900, 1950), iv(1800, 1850), OutcomeInconclusive, "-7.7 % to -2.6 %"},
		// A wide interval cannot be called the same.
		{"wide", iv(1000, 2000), iv(1500, 1600), OutcomeInconclusive, "beyond it"},
		// Open ends: a candidate that never saturated above the baseline's
		// saturated rate is an improvement; one saturated at its minimum
		// below the baseline's sustainable rate a regression.
		{"candidate never saturated", iv(1000, 1050), iv(2000, inf), OutcomeImprovement, "+inf"},
		{"candidate saturated at minimum", iv(1000, 1050), iv(0, 10), OutcomeRegression, "-100.0 %"},
		{"both never saturated", iv(2000, inf), iv(2000, inf), OutcomeInconclusive, "+inf"},
		{"no interval", iv(1900, 1950), iv(0, inf), OutcomeInconclusive, "no interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := CompareSaturation(tt.base, tt.cand, 0.05)
			if v.Outcome != tt.want || !strings.Contains(v.Why, tt.why) {
				t.Errorf("%s vs %s: %s (%s), want %s with %q", tt.cand, tt.base, v.Outcome, v.Why, tt.want, tt.why)
			}
			if !strings.Contains(v.Rule, "regression when") {
				t.Errorf("rule %q", v.Rule)
			}
		})
	}
	// Swapping the roles swaps regression and improvement.
	if v := CompareSaturation(iv(1650, 1700), iv(1900, 1950), 0.05); v.Outcome != OutcomeImprovement {
		t.Errorf("swapped: %s", v.Outcome)
	}
	if v := CompareSaturation(iv(1900, 1950), iv(1925, 1975), 1.5); v.Outcome != OutcomeInconclusive || !strings.Contains(v.Why, "margin") {
		t.Errorf("bad margin: %s %s", v.Outcome, v.Why)
	}
}

func TestIntervalOf(t *testing.T) {
	tests := []struct {
		st   SearchState
		want string
		ok   bool
	}{
		{SearchState{Low: 1900, High: 1950, Outcome: Found}, "[1900, 1950)", true},
		{SearchState{Low: 2000, Outcome: NoSaturation}, "[2000, inf)", true},
		{SearchState{High: 10, Outcome: AtMinimum}, "[0, 10)", true},
		{SearchState{Outcome: Inconclusive}, "[0, inf)", false},
		{SearchState{Low: 500, High: 400, Outcome: Inconclusive}, "[500, 400)", false},
	}
	for _, tt := range tests {
		iv, ok := IntervalOf(tt.st)
		if iv.String() != tt.want || ok != tt.ok {
			t.Errorf("%+v: %s %v, want %s %v", tt.st, iv, ok, tt.want, tt.ok)
		}
	}
}
