package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/capacity"
)

// TestCapacityRefused: a testnet far beyond this machine (the 200-node QA
// size as a full mesh) is refused by up and run with exit 2 and the
// estimate, before any run directory or process exists.
func TestCapacityRefused(t *testing.T) {
	t.Setenv(capacity.CacheDirEnv, t.TempDir()) // the stated default profile
	manifestPath := filepath.Join(t.TempDir(), "huge.toml")
	huge := "name = \"huge\"\n[network]\nsubnet = \"10.213.0.0/16\"\ntopology = \"full\"\n[node.qzv]\ncount = 200\n"
	if err := os.WriteFile(manifestPath, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"up", "run"} {
		out := t.TempDir()
		code, stderr := runCaptured(t, []string{verb, manifestPath, "--output", out})
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", verb, code, exitUsage, stderr)
		}
		for _, want := range []string{"testnet does not fit on this machine: 200 nodes, 19900 links need", "blocks/s on", "--force"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", verb, want, stderr)
			}
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%s: refused but created %v", verb, entries)
		}
		checkNothingStarted(t, out)
	}
}
