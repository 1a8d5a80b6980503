package linkem

import (
	"context"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		kind, name, err string
	}{
		{KindNone, KindNone, ""},
		{KindNetem, KindNetem, ""},
		{"tc", "", `unknown backend "tc"`},
	} {
		b, reason, err := Open(context.Background(), tc.kind, Options{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Open(%q) err = %v, want %q", tc.kind, err, tc.err)
			}
			continue
		}
		if err != nil || b.Name() != tc.name || reason == "" {
			t.Errorf("Open(%q) = %v, %q, %v", tc.kind, b, reason, err)
			continue
		}
		b.Close()
	}
	// The netem backend refuses to run without namespace naming.
	if err := NewNetem(NetemConfig{}).Apply(context.Background(), threeZoneModel(t)); err == nil {
		t.Error("netem Apply without Netns: want an error")
	}
}
