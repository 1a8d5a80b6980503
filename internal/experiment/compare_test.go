package experiment

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// fakeRun writes a finished run directory whose chain commits tps txs/s in
// one-second blocks with latencies around lat ms, noise drawn from rng.
func fakeRun(t *testing.T, dir string, raw []byte, tps, lat float64, rng *rand.Rand) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, rundir.Metrics), 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ := rundir.Open(dir)
	const nBlocks = 20
	t0 := int64(1_700_000_000_000_000_000)
	var blocks []rundir.Block
	var txs []rundir.Tx
	var lats []float64
	seq := uint64(0)
	for b := 0; b <= nBlocks; b++ {
		h := int64(b + 10)
		bt := t0 + int64(b)*1e9
		n := 0
		if b < nBlocks {
			n = int(tps * (1 + 0.03*rng.NormFloat64()))
		}
		blocks = append(blocks, rundir.Block{Height: h, TimeNs: bt, NumTxs: n, RunTxs: n})
		for i := 0; i < n; i++ {
			l := lat * (1 + 0.05*rng.NormFloat64())
			lats = append(lats, l)
			seq++
			txs = append(txs, rundir.Tx{Seq: seq, Node: "validator0", Hash: "AB", State: rundir.StateCommitted, Height: h, BlockTimeNs: bt,
				LatencyMs: l, HasLatency: true, LatencyNextMs: l + 1000, HasNext: true})
		}
	}
	st := analyze.Summarize(lats)
	res := &rundir.Results{TotalSubmitted: len(txs), TotalIncluded: len(txs), DurationSec: nBlocks,
		TxPerSecond: float64(len(txs)) / nBlocks, AvgLatencyMs: st.Avg, P50LatencyMs: st.P50, P95LatencyMs: st.P95,
		P99LatencyMs: st.P99, MaxLatencyMs: st.Max, PeakMempool: int(tps / 2), Latency: st, LatencyBlock: "H",
		BlockStats: rundir.BlockStats{Blocks: nBlocks, AvgBlockSec: 1}, Valid: true,
		Accounting: rundir.Accounting{Sent: len(txs), Committed: len(txs)},
		P2P:        &rundir.P2PTraffic{BytesPerTx: 2e5 / tps}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.WriteResults(res))
	must(rundir.BlocksCSV.WriteFile(rundir.BlocksCSV.Path(d), blocks))
	must(rundir.TxsCSV.WriteFile(rundir.TxsCSV.Path(d), txs))
	must(rundir.ProcCSV.WriteFile(rundir.ProcCSV.Path(d), []rundir.Proc{
		{TimeNs: t0, Node: "validator0", PID: 1, RSSBytes: 100 << 20, CPUSeconds: 1},
		{TimeNs: t0 + 20e9, Node: "validator0", PID: 1, RSSBytes: 120 << 20, CPUSeconds: 1 + float64(len(txs))/1000},
	}))
	must(d.WriteMachine(&rundir.Machine{Hostname: "h", CPUs: 2}))
	must(d.WriteFile(rundir.Manifest, raw))
	// The load began a block interval before the first block.
	must(d.WriteLoad(&rundir.LoadSummary{Start: time.Unix(0, t0-1e9), End: time.Unix(0, t0+(nBlocks-1)*1e9), Sent: len(txs), OK: len(txs), Valid: true}))
}

const cmpManifest = `name = "cmp"
[node.validator]
count = 2
[load]
rate = 100
duration = "5s"
[variants.fast]
[variants.slow.node.validator.config]
"consensus.timeout_commit" = "3s"
`

// A fake chain per variant: "slow" commits 40 % less with 50 % more latency.
func fakeMeasure(t *testing.T, slowTPS, slowLat float64) (func(ctx context.Context, m *manifest.Manifest, root string) (string, error), *[]string) {
	rng := rand.New(rand.NewPCG(1, 2))
	var order []string
	n := 0
	return func(ctx context.Context, m *manifest.Manifest, root string) (string, error) {
		n++
		slow := m.Node["validator"].Config["consensus.timeout_commit"] == "3s"
		name := "fast"
		tps, lat := 1000.0, 200.0
		if slow {
			name, tps, lat = "slow", slowTPS, slowLat
		}
		order = append(order, name)
		dir := filepath.Join(root, m.Name+"-"+string(rune('0'+n)))
		fakeRun(t, dir, m.Raw, tps, lat, rng)
		return dir, nil
	}, &order
}

func TestRunCompare(t *testing.T) {
	m, err := manifest.Parse("cmp.toml", []byte(cmpManifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		slowTPS, slowLat float64
		wantExit         int
		wantRegressed    []string
		equivalence      bool
	}{
		{"regression", 600, 300, 3, []string{"slow: tps", "slow: latency_avg", "slow: latency_p50", "slow: latency_p95", "slow: p2p_bytes_per_tx"}, false},
		{"A/A", 1000, 200, 0, nil, false},
		// 40 % faster: not a regression, but not equivalent either.
		{"better, asked for equivalence", 1400, 120, 3, []string{"slow: tps", "slow: latency_avg"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			measure, order := fakeMeasure(t, tc.slowTPS, tc.slowLat)
			cfg := DefaultCompare()
			cfg.Equivalence, cfg.Paired = tc.equivalence, tc.equivalence
			root, idx, err := RunCompare(context.Background(), m, cfg, CompareOptions{Output: out, Measure: measure,
				Now: func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(*order, " "); got != "fast slow slow fast fast slow" {
				t.Errorf("run order %q, want interleaved, every other round reversed", got)
			}
			if idx.ExitCode != tc.wantExit {
				t.Errorf("exit %d, want %d; regressions %v", idx.ExitCode, tc.wantExit, idx.Regressions)
			}
			for _, w := range tc.wantRegressed {
				if !slices.Contains(idx.Regressions, w) {
					t.Errorf("regressions %v lack %q", idx.Regressions, w)
				}
			}
			if tc.wantExit == 0 {
				for _, j := range idx.Verdicts[0].Judgements {
					if j.Verdict == judge.OutcomeRegression || j.Verdict == judge.OutcomeImprovement {
						t.Errorf("A/A %s: %s", j.Metric, j.Verdict)
					}
				}
			}
			for _, j := range idx.Verdicts[0].Judgements {
				want := "runs+blocks"
				if tc.equivalence {
					want = "pairs" // the rounds' pairs
				} else if j.Metric == "peak_mempool" || j.Metric == "rss_peak" || j.Metric == "cpu_per_tx" || j.Metric == "inclusion" || j.Metric == "p2p_bytes_per_tx" {
					want = "runs"
				}
				if j.Basis != want || j.NBase != 3 {
					t.Errorf("%s: basis %s %d/%d, want %s 3/3", j.Metric, j.Basis, j.NBase, j.NVariant, want)
				}
			}
			// Judging the directory again gives the same index.
			before, _ := os.ReadFile(filepath.Join(root, rundir.CompareFile))
			again, err := ReadCompareIndex(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := JudgeCompare(root, again); err != nil {
				t.Fatal(err)
			}
			if err := WriteCompareIndex(root, again); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(filepath.Join(root, rundir.CompareFile))
			if !bytes.Equal(before, after) {
				t.Error("compare.json changed when judged again")
			}
			// Each run directory holds its variant's manifest.
			data, _ := os.ReadFile(filepath.Join(idx.Runs[1].RunPath(root), rundir.Manifest))
			if !strings.HasPrefix(string(data), "# variant \"slow\"") || !strings.Contains(string(data), "timeout_commit") {
				t.Errorf("run 2's manifest:\n%s", data)
			}
		})
	}
}

// One run per side: the interval comes from the runs' blocks.
func TestCompareDirsBlocks(t *testing.T) {
	m, _ := manifest.Parse("cmp.toml", []byte(cmpManifest))
	fast, _ := m.Variant("fast")
	slow, _ := m.Variant("slow")
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	fakeRun(t, a, fast.Raw, 1000, 200, rng)
	fakeRun(t, b, slow.Raw, 500, 400, rng)
	fakeRun(t, c, fast.Raw, 1000, 200, rng)

	_, idx, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"b", []string{b}}, {"c", []string{c}}}, DefaultCompare(), t.TempDir(), false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if idx.ExitCode != judge.ExitRegression || !slices.Contains(idx.Regressions, "b: tps") || slices.ContainsFunc(idx.Regressions, func(s string) bool { return strings.HasPrefix(s, "c:") }) {
		t.Errorf("exit %d regressions %v: want b's tps, nothing of c", idx.ExitCode, idx.Regressions)
	}
	for _, vv := range idx.Verdicts {
		for _, j := range vv.Judgements {
			want := "blocks"
			if j.Metric == "peak_mempool" || j.Metric == "rss_peak" || j.Metric == "cpu_per_tx" || j.Metric == "inclusion" || j.Metric == "p2p_bytes_per_tx" {
				want = "runs" // no per-block form: no interval from one run
				if j.Verdict != judge.OutcomeInconclusive {
					t.Errorf("%s %s: %s from one run", vv.Variant, j.Metric, j.Verdict)
				}
			}
			if j.Basis != want {
				t.Errorf("%s %s: basis %s, want %s", vv.Variant, j.Metric, j.Basis, want)
			}
		}
	}
}

func TestCompareDirsRefusesOtherManifests(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	base := "name = \"x\"\n[node.validator]\ncount = 2\n[load]\nrate = 100\n"
	a, b, c, d := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c"), filepath.Join(root, "d")
	fakeRun(t, a, []byte(base), 1000, 200, rng)
	fakeRun(t, b, []byte(strings.Replace(base, "count = 2", "count = 2\nrelease = \"cometbft@v0.38.17\"", 1)), 1000, 200, rng)
	fakeRun(t, c, []byte(strings.Replace(base, "rate = 100", "rate = 300", 1)), 1000, 200, rng)
	fakeRun(t, d, []byte(base), 1000, 200, rng)
	if err := os.WriteFile(filepath.Join(d, rundir.MachineFile), []byte(`{"hostname":"other","cpus":64}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A release differs: a variant key.
	if _, _, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"b", []string{b}}}, DefaultCompare(), t.TempDir(), false, time.Now()); err != nil {
		t.Errorf("release difference refused: %v", err)
	}
	// The load differs: refused, unless forced.
	_, _, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"c", []string{c}}}, DefaultCompare(), t.TempDir(), false, time.Now())
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "load.rate (100 vs 300)") {
		t.Errorf("load difference: err = %v", err)
	}
	if _, idx, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"c", []string{c}}}, DefaultCompare(), t.TempDir(), true, time.Now()); err != nil || len(idx.Warnings) == 0 {
		t.Errorf("--force: %v, warnings %v", err, idx.Warnings)
	}
	// Another machine: a warning.
	_, idx, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"d", []string{d}}}, DefaultCompare(), t.TempDir(), false, time.Now())
	if err != nil || !slices.ContainsFunc(idx.Warnings, func(w string) bool { return strings.Contains(w, "another machine") }) {
		t.Errorf("machine: %v %v", err, idx.Warnings)
	}
}

func TestCompareValidate(t *testing.T) {
	c := &Compare{Repeats: 0, Threshold: -1, FailOn: []string{"tps", "nope"}}
	if errs := c.Validate(); len(errs) != 3 {
		t.Errorf("got %v, want 3 problems", errs)
	}
	if errs := DefaultCompare().Validate(); len(errs) != 0 {
		t.Errorf("defaults invalid: %v", errs)
	}
}

func TestCompareRegistered(t *testing.T) {
	cfg, err := Decode("compare", []byte("repeats = 5\nthreshold = 5.0\nfail_on = [\"tps\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.(*Compare)
	if c.Repeats != 5 || c.Threshold != 5 || len(c.FailOn) != 1 || len(c.Validate()) != 0 {
		t.Errorf("decoded %+v", c)
	}
	if _, err := Decode("compare", []byte("repeat = 5\n")); err == nil || !strings.Contains(err.Error(), "repeat: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
}

// Two sweeps compare point by point: each load point of the second against
// the first's same point.
func TestCompareSweeps(t *testing.T) {
	data, err := os.ReadFile("../report/testdata/sweep1/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	mk := func(name string, slow float64) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.SweepFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := rundir.SweepRecord.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range x.Cells {
			if c.Status == rundir.CellDone && c.RunDir != "" {
				fakeRun(t, filepath.Join(dir, c.RunDir), []byte(cmpManifest), 1000, 200*slow, rng)
			}
		}
		return dir
	}
	a, b := mk("a", 1), mk("b", 2)
	_, idx, err := CompareDirs([]DirVariant{{"a", []string{a}}, {"b", []string{b}}}, DefaultCompare(), t.TempDir(), false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Sweeps) != 2 || len(idx.Verdicts) == 0 {
		t.Fatalf("sweeps %v, %d verdicts", idx.Sweeps, len(idx.Verdicts))
	}
	for _, vv := range idx.Verdicts {
		if !strings.HasPrefix(vv.Variant, "b c") || vv.Base != "a"+strings.TrimPrefix(vv.Variant, "b") {
			t.Errorf("%s judged against %s", vv.Variant, vv.Base)
		}
	}
	if !slices.ContainsFunc(idx.Regressions, func(s string) bool { return strings.HasSuffix(s, ": latency_avg") }) || idx.ExitCode != judge.ExitRegression {
		t.Errorf("doubled latency at every point: regressions %v", idx.Regressions)
	}
}

// Every other round runs in reverse, so no variant always runs second
// (right after the previous run's teardown): each holds each place in a
// round equally often over an even number of rounds.
func TestCompareOrderBalanced(t *testing.T) {
	var got []string
	for _, r := range CompareOrder([]string{"baseline", "candidate"}, 4) {
		got = append(got, r.Variant)
	}
	want := []string{"baseline", "candidate", "candidate", "baseline", "baseline", "candidate", "candidate", "baseline"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
