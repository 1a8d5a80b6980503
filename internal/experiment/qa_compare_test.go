package experiment

import (
	"context"
	"strconv"
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
	// A resume of a finished adaptive compare adds no round past the
	// maximum, and never a second round 1.
	measure, order := fakeMeasure(t, 900, 200)
	cfg := DefaultCompare()
	cfg.FailOn, cfg.MaxRepeats = []string{"tps"}, 5
	out := t.TempDir()
	root, idx, err := RunCompare(context.Background(), m, cfg, CompareOptions{Output: out, Measure: measure, Now: func() time.Time { return now }})
	if err != nil || len(idx.Runs) != 10 {
		t.Fatalf("first pass: %d runs, %v", len(idx.Runs), err)
	}
	rx, err := DefaultCompare().NewExecutor(nil, Env{Lab: &fakeLab{steady: measure}, Output: out, Resume: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rx.Run(context.Background()); err != nil && !strings.Contains(err.Error(), "inconclusive") {
		t.Fatal(err)
	}
	again, err := ReadCompareIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range again.Runs {
		k := r.Variant + "/" + strconv.Itoa(r.Repeat)
		if seen[k] {
			t.Errorf("round %d of %s twice", r.Repeat, r.Variant)
		}
		seen[k] = true
	}
	if len(again.Runs) != 10 || len(*order) != 10 {
		t.Errorf("resumed: %d runs in the index, %d measured; want 10 and 10", len(again.Runs), len(*order))
	}
	cfg = DefaultCompare()
	cfg.MaxRepeats = 2
	if errs := cfg.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "max_repeats") {
		t.Errorf("max_repeats below repeats: %v", errs)
	}
}
