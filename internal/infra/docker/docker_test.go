package docker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"38.5MiB": 38*(1<<20) + (1 << 19), "1GiB": 1 << 30, "512KiB": 512 << 10, "10B": 10, "2kB": 2000, "junk": 0} {
		if got := parseSize(in); got != want {
			t.Errorf("parseSize(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCheckStatic(t *testing.T) {
	// A dynamically linked binary of the machine is refused; a Go test
	// binary built with CGO_ENABLED=0 would pass, but the test binary
	// itself may be either, so only the refusal is asserted.
	for _, p := range []string{"/bin/ls", "/usr/bin/env"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		err := checkStatic(p)
		if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("checkStatic(%s) = %v, want a refusal", p, err)
		}
		return
	}
	t.Skip("no dynamically linked system binary to try")
}

func TestCheckStaticNotELF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(p); err == nil {
		t.Error("a script passed as a static binary")
	}
}
