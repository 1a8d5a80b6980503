package docker

import (
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"38.5MiB": 38*(1<<20) + (1 << 19), "1GiB": 1 << 30, "512KiB": 512 << 10, "10B": 10, "2kB": 2000, "junk": 0} {
		if got := parseSize(in); got != want {
			t.Errorf("parseSize(%q) = %d, want %d", in, got, want)
		}
	}
}
