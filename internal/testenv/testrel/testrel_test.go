package testrel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/benchnet/benchnet/internal/release"
)

// TestNeedToolUsesCache: the binary is looked up where the cache puts
// it (BENCHNET_CACHE here), the same path `benchnet build` writes.
func TestNeedToolUsesCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("BENCHNET_CACHE", cache)
	bin := filepath.Join(cache, "bin", "cometbft@v9.9.9", "cometbft")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!"), 0o755); err != nil {
		t.Fatal(err)
	}
	// needFile is NeedTool without the integration switch, so this unit
	// test runs in the fast tier.
	if got := needFile(t, release.Release{Name: "cometbft", Version: "v9.9.9"}, "cometbft"); got != bin {
		t.Errorf("NeedTool's path = %q, want %q (under BENCHNET_CACHE)", got, bin)
	}
}
