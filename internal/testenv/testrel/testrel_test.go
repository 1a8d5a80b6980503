package testrel

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNeedCometBFTUsesCache: the binary is looked up where the cache puts
// it (BENCHNET_CACHE here), the same path `benchnet build` writes.
func TestNeedCometBFTUsesCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("BENCHNET_CACHE", cache)
	bin := filepath.Join(cache, "bin", "cometbft@v9.9.9", "cometbft")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, got := NeedCometBFT(t, "v9.9.9"); got != bin {
		t.Errorf("NeedCometBFT = %q, want %q (under BENCHNET_CACHE)", got, bin)
	}
}
