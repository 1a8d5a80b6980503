package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// soakBlocks replaces a run's blocks.csv with 1.2 s blocks for 5 min whose
// throughput decays 300 + 500·exp(−t/τ) with a 100 s half-life.
func soakBlocks(t *testing.T, dir string) {
	t.Helper()
	tau := 100 / math.Ln2
	var b strings.Builder
	b.WriteString("height,time_ns,num_txs,run_txs,size_bytes,proposer\n")
	for h, ts := 1, 0.0; ts < 300; h, ts = h+1, ts+1.2 {
		n := int((300+500*math.Exp(-ts/tau))*1.2 + 0.5)
		fmt.Fprintf(&b, "%d,%d,%d,%d,1000,A\n", h, int64(2e18+ts*1e9), n, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "blocks.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
