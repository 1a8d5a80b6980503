package linkem

import (
	"fmt"
	"strconv"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

// The value syntaxes of [network] belong to the manifest's validation (one
// owner for the rules); these wrappers give the link emulator the same
// parsers, with the field named for errors raised outside a manifest.

// ParseJitter parses [network].jitter: a percentage of each link's one-way
// delay ("5%") or an absolute duration ("2ms"). "" means none.
func ParseJitter(s string) (frac float64, abs time.Duration, err error) {
	frac, abs, err = manifest.ParseJitter(s)
	if err != nil {
		return 0, 0, fmt.Errorf("network.jitter: %w", err)
	}
	return frac, abs, nil
}

// ParseDelay is manifest.ParseDelay ([network].delay), its error naming the field.
func ParseDelay(s string) (time.Duration, error) {
	d, err := manifest.ParseDelay(s)
	if err != nil {
		return 0, fmt.Errorf("network.delay: %w", err)
	}
	return d, nil
}

// ParseLoss is manifest.ParseLoss, its error naming the field.
func ParseLoss(s string) (float64, error) {
	p, err := manifest.ParseLoss(s)
	if err != nil {
		return 0, fmt.Errorf("network.loss: %w", err)
	}
	return p, nil
}

// ParseRate parses [network].bandwidth ("10mbit", "500kbit", "1.5gbit") into
// bits per second. "" means unlimited (0).
func ParseRate(s string) (uint64, error) {
	bps, err := manifest.ParseBandwidth(s)
	if err != nil {
		return 0, fmt.Errorf("network.bandwidth: %w", err)
	}
	return bps, nil
}

// FormatRate renders bits/s the way tc accepts them, exactly ("10mbit",
// "1500kbit", "12345bit").
func FormatRate(bps uint64) string {
	for _, u := range manifest.RateUnits {
		m := uint64(u.Mult)
		if bps >= m && bps%m == 0 {
			return strconv.FormatUint(bps/m, 10) + u.Suffix
		}
	}
	return strconv.FormatUint(bps, 10) + "bit"
}
