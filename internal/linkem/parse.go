package linkem

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseJitter parses [network].jitter: a percentage of each link's one-way
// delay ("5%") or an absolute duration ("2ms"). "" means none.
func ParseJitter(s string) (frac float64, abs time.Duration, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, nil
	}
	if strings.HasSuffix(s, "%") {
		p, err := parsePercent(s)
		if err != nil {
			return 0, 0, fmt.Errorf("network.jitter: %w", err)
		}
		return p, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, 0, fmt.Errorf("network.jitter: %q: want a percentage of the delay (\"5%%\") or a duration (\"2ms\")", s)
	}
	return 0, d, nil
}

// ParseLoss parses [network].loss, a percentage ("0.1%"). "" means none.
func ParseLoss(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("network.loss: %q: want a percentage such as \"0.1%%\"", s)
	}
	p, err := parsePercent(s)
	if err != nil {
		return 0, fmt.Errorf("network.loss: %w", err)
	}
	return p, nil
}

func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("%q: want a percentage between 0%% and 100%%", s)
	}
	return v / 100, nil
}

// rateUnits are tc's bit-rate units (SI multiples). tc's "bps" means bytes
// per second, a classic trap, so byte units are rejected rather than guessed.
var rateUnits = []struct {
	suffix string
	mult   float64
}{
	{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
}

// ParseRate parses [network].bandwidth ("10mbit", "500kbit", "1.5gbit") into
// bits per second. "" means unlimited (0).
func ParseRate(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, nil
	}
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				break
			}
			bps := v * u.mult
			if bps < 8 || bps > 1e13 {
				return 0, fmt.Errorf("network.bandwidth: %q: out of range (8bit to 10tbit)", s)
			}
			return uint64(math.Round(bps)), nil
		}
	}
	return 0, fmt.Errorf("network.bandwidth: %q: want a positive rate with a bit unit: bit, kbit, mbit, gbit (e.g. \"10mbit\")", s)
}

// FormatRate renders bits/s the way tc accepts them, exactly ("10mbit",
// "1500kbit", "12345bit").
func FormatRate(bps uint64) string {
	for _, u := range rateUnits {
		m := uint64(u.mult)
		if bps >= m && bps%m == 0 {
			return strconv.FormatUint(bps/m, 10) + u.suffix
		}
	}
	return strconv.FormatUint(bps, 10) + "bit"
}
