package report

import (
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		axis, in string
		min, max float64
		dur      bool
		err      string
	}{
		{"x", "10s:20s", 10, 20, true, ""},
		{"y", "0:2s", 0, 2000, true, ""},
		{"y", "500ms:1.5s", 500, 1500, true, ""},
		{"y", "0:4000", 0, 4000, false, ""},
		{"x", "10s:", 10, nanMax, true, ""},
		{"x", "20s:10s", 0, 0, false, "end must be above"},
		{"x", "10s", 0, 0, false, "want MIN:MAX"},
		{"y", "0:two", 0, 0, false, "--yrange"},
	} {
		r, err := ParseRange(c.axis, c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %q: err %v, want %q", c.axis, c.in, err, c.err)
			}
			continue
		}
		if err != nil || r.Min != c.min || r.Max != c.max || r.Duration != c.dur {
			t.Errorf("%s %q = %+v, %v; want %v:%v dur %v", c.axis, c.in, r, err, c.min, c.max, c.dur)
		}
	}
}
