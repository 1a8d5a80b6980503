package experiment

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

func writeBlocks(t *testing.T, dir string, rows []string) {
	t.Helper()
	data := "height,time_ns,num_txs,run_txs,size_bytes,proposer\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "blocks.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestThroughputSeries(t *testing.T) {
	dir := t.TempDir()
	const s = int64(1e9)
	writeBlocks(t, dir, []string{
		fmt.Sprintf("1,%d,1,0,10,A", 100*s),        // warm-up block: before the first run tx
		fmt.Sprintf("2,%d,50,50,10,A", 101*s),      // t = 0
		fmt.Sprintf("3,%d,70,70,10,A", 101*s+s/2),  // t = 0.5: same bin
		fmt.Sprintf("4,%d,0,0,10,A", 102*s+s/4),    // empty block, bin 1
		fmt.Sprintf("5,%d,90,90,10,A", 103*s+s/10), // bin 2
		fmt.Sprintf("6,%d,40,40,10,A", 104*s+s/2),  // bin 3, the last: partial, left out
		fmt.Sprintf("7,%d,3,0,10,A", 105*s),        // after the run
	})
	tt, y, err := ThroughputSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	// From t0 = block 1 (100 s): block 2's 50 txs over [0, 1], block 3's 70
	// over [1, 1.5], block 5's 90 over [2.25, 3.1] (79.41 in bin 2, 10.59 in
	// bin 3), block 6's 40 over [3.1, 4.5] (25.71 in bin 3; bin 4 is partial).
	want := []float64{50, 70, 79.412, 36.303}
	if !reflect.DeepEqual(tt, []float64{0, 1, 2, 3}) || len(y) != 4 {
		t.Fatalf("series t=%v y=%v, want 4 bins %v", tt, y, want)
	}
	for i := range want {
		if math.Abs(y[i]-want[i]) > 0.001 {
			t.Errorf("bin %d: %.3f, want %.3f", i, y[i], want[i])
		}
	}
	writeBlocks(t, dir, []string{"1,100,1,0,10,A"})
	if _, _, err := ThroughputSeries(dir); err == nil || !strings.Contains(err.Error(), "no block holds a run tx") {
		t.Errorf("no run txs: %v", err)
	}
}

func TestAnalyzeSoak(t *testing.T) {
	dir := t.TempDir()
	// 1.2 s blocks for 10 min carrying 400 + 600·exp(−t/τ) tx/s with a
	// half-life of 250 s, as tm-bench's report describes.
	tau := 250 / math.Ln2
	var rows []string
	for h, ts := 1, 0.0; ts < 600; h, ts = h+1, ts+1.2 {
		rate := 400 + 600*math.Exp(-ts/tau)
		n := int(rate*1.2 + 0.5)
		rows = append(rows, fmt.Sprintf("%d,%d,%d,%d,10,A", h, int64(1e12+ts*1e9), n, n))
	}
	writeBlocks(t, dir, rows)
	res, err := AnalyzeSoak(dir, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fit
	if !f.Decays || f.HalfLifeLo > 250 || f.HalfLifeHi < 250 || math.Abs(f.HalfLife-250) > 30 {
		t.Errorf("fit %+v: want a decay with half-life 250 s inside its interval", f)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SoakFile)); err != nil {
		t.Error(err)
	}
	if errs := (&Soak{Rate: 0, Connections: 0, Bootstrap: 1}).Validate(); len(errs) != 4 {
		t.Errorf("validate: %v", errs)
	}
}
