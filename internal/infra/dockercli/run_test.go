package dockercli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

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
	testenv.Skip(t, "no dynamically linked system binary to try")
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
