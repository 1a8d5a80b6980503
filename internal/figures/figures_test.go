package figures

import (
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/judge"
)

type fakeMetrics struct{}

func (fakeMetrics) Metrics() []judge.Metric          { return nil }
func (fakeMetrics) ReadFigures(string) (*Run, error) { return nil, nil }
func (fakeMetrics) Unit() string                     { return "unit" }
func (fakeMetrics) Resampling() string               { return "" }
func (fakeMetrics) VariantKey(string) bool           { return false }
func (fakeMetrics) VariantKeys() string              { return "" }

// A kind's metrics are found by its name once registered, never twice; an
// unregistered kind is an error naming what the binary has; "" is cometbft.
func TestRegistry(t *testing.T) {
	Register("fake-kind", fakeMetrics{})
	t.Cleanup(func() { kinds.Unregister("fake-kind") })
	if nm, err := For("fake-kind"); err != nil || nm.Unit() != "unit" {
		t.Errorf("For(fake-kind) = %v, %v", nm, err)
	}
	if _, err := For(""); err == nil || !strings.Contains(err.Error(), `"cometbft"`) || !strings.Contains(err.Error(), "fake-kind") {
		t.Errorf(`For("") in a binary without cometbft's metrics: %v`, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of one kind did not panic")
		}
	}()
	Register("fake-kind", fakeMetrics{})
}
