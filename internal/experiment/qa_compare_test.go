package experiment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
)

// Adaptive repeats: a round is added only while a judged metric is
// inconclusive, up to MaxRepeats, within the deadline; the reason it
// stopped is recorded.
func TestCompareAdaptiveRepeats(t *testing.T) {
	m, err := manifest.Parse("cmp.toml", []byte(cmpManifest))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		slowTPS  float64
		deadline time.Time
		wantRuns int
		wantWhy  string
	}{
		{"decided", 600, time.Time{}, 6, "decided after 3 repeats"},
		{"straddles to the maximum", 900, time.Time{}, 10, "maximum of 5 repeats per variant reached"},
		{"budget", 900, now.Add(-time.Minute), 6, "budget: another round"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			measure, _ := fakeMeasure(t, tc.slowTPS, 200)
			cfg := DefaultCompare()
			cfg.FailOn, cfg.MaxRepeats = []string{"tps"}, 5
			if errs := cfg.Validate(); len(errs) > 0 {
				t.Fatal(errs)
			}
			_, idx, err := RunCompare(context.Background(), m, cfg, CompareOptions{Output: t.TempDir(), Measure: measure,
				Now: func() time.Time { return now }, Deadline: tc.deadline})
			if err != nil {
				t.Fatal(err)
			}
			if len(idx.Runs) != tc.wantRuns || !strings.Contains(idx.StopReason, tc.wantWhy) {
				t.Errorf("%d runs, stop reason %q; want %d runs and %q", len(idx.Runs), idx.StopReason, tc.wantRuns, tc.wantWhy)
			}
			if idx.AddedRounds != (tc.wantRuns-6)/2 {
				t.Errorf("added rounds %d", idx.AddedRounds)
			}
		})
	}
	cfg := DefaultCompare()
	cfg.MaxRepeats = 2
	if errs := cfg.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "max_repeats") {
		t.Errorf("max_repeats below repeats: %v", errs)
	}
}
