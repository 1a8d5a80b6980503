package scenario

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/export"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestLoadtimeCrossCheck runs the quickstart with CometBFT's loadtime
// payload, then reads validator0's stopped block store with CometBFT's own
// `report` tool and checks that it saw exactly our committed txs with exactly
// our H+1 latencies, and that its mean agrees with ours within 1 ms.
func TestLoadtimeCrossCheck(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	reportBin := needTool(t, v101, "loadtime-report")
	const rate, seconds, size = 100, 10, 1024
	m := example(t, "quickstart.toml", subnetLoadtime, map[string]map[string]string{
		"load": {"format": `"loadtime"`, "rate": strconv.Itoa(rate), "duration": fmt.Sprintf(`"%ds"`, seconds),
			"size": strconv.Itoa(size), "warmup": `"20s"`, "grace": `"15s"`},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := Steady(ctx, m, Options{Up: testnetOptions(t), Log: testenv.LogWriter(t)})
	if err != nil {
		t.Fatalf("steady run: %v", err)
	}
	res := out.Results
	if a := res.Accounting; a.Sent != rate*seconds || a.Committed != a.Sent {
		t.Fatalf("want all %d txs sent and committed: %+v", rate*seconds, a)
	}
	runID, pids := runIdentity(t, out.RunDir)
	checkNothingLeft(t, runID, pids)

	// The nodes are stopped; their homes stay in the run directory. The
	// report tool opens the block store with the backend the node used
	// (v1.0.1 defaults to pebbledb, which its cometbft-db v1.0.1 builds in).
	home := filepath.Join(out.RunDir, rundir.Homes, "validator0")
	backend := dbBackend(t, filepath.Join(home, "config", "config.toml"))
	dataDir := filepath.Join(home, "data")
	text := runTool(t, ctx, reportBin, "--database-type", backend, "--data-dir", dataDir)
	t.Logf("loadtime report (%s):\n%s", backend, text)
	rep, err := analysis.ParseLoadtimeReport(text)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InvalidTxs != 0 {
		t.Errorf("report counts %d invalid txs: every tx of the chain should be a loadtime payload", rep.InvalidTxs)
	}
	// Our run's txs carry RunUUID(run id); the warm-up's carry the warm-up
	// run id's, so the report lists them as a separate experiment.
	ours, warm := uuidString(load.RunUUID(runID)), uuidString(load.RunUUID(runID+"-warmup"))
	var exp *analysis.LoadtimeStats
	for i, e := range rep.Experiments {
		switch e.ID {
		case ours:
			exp = &rep.Experiments[i]
		case warm:
			if e.ValidTxs != 4 {
				t.Errorf("warm-up experiment has %d txs, want 4 (one per validator)", e.ValidTxs)
			}
		default:
			t.Errorf("report has an experiment %s that is neither the run (%s) nor its warm-up (%s)", e.ID, ours, warm)
		}
	}
	if exp == nil {
		t.Fatalf("report has no experiment %s (run %s)", ours, runID)
	}
	if exp.Connections != 1 || exp.Rate != rate || exp.Size != size {
		t.Errorf("experiment parameters %d conns, %d tx/s, %d B; want 1, %d, %d", exp.Connections, exp.Rate, exp.Size, rate, size)
	}

	// Which txs report counts: for i in base+1 … height−1 it takes the txs
	// of block i−1 with the time of block i, so the txs of the store's last
	// TWO blocks are left out (not only the last one, as its comment says).
	// Steady stops the nodes right after the harvest, so the run's last
	// block is usually the store's second to last: restrict ours to blocks
	// at or below height−2 of validator0's store (read from its log, not
	// from the report) to compare identical sets.
	storeHeight := lastCommittedHeight(t, filepath.Join(out.RunDir, rundir.Logs, "validator0.log"))
	counted := storeHeight - 2

	// Per tx: the same set of hashes, the same latency to the nanosecond
	// (both are H+1 block time minus the payload's time, which is our sent_ns).
	csvPath := filepath.Join(t.TempDir(), "loadtime.csv")
	runTool(t, ctx, reportBin, "--database-type", backend, "--data-dir", dataDir, "--csv", csvPath)
	theirs := map[string]int64{}
	for _, r := range readCSV(t, csvPath) {
		if r["experiment_id"] != ours {
			continue
		}
		d, err := strconv.ParseInt(r["duration_ns"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		theirs[r["tx_hash"]] = d
	}
	// `benchnet export --format loadtime` writes the tool's rows: for
	// every tx the tool counted, the same experiment, block time,
	// duration and load columns.
	exportPath := filepath.Join(t.TempDir(), "export.csv")
	ef, err := os.Create(exportPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Loadtime(ef, out.RunDir); err != nil {
		t.Fatal(err)
	}
	if err := ef.Close(); err != nil {
		t.Fatal(err)
	}
	exported := map[string]map[string]string{}
	for _, r := range readCSV(t, exportPath) {
		exported[r["tx_hash"]] = r
	}
	exportDiffers := 0
	for _, r := range readCSV(t, csvPath) {
		if r["experiment_id"] != ours {
			continue
		}
		e, ok := exported[r["tx_hash"]]
		if !ok || e["experiment_id"] != r["experiment_id"] || e["block_time"] != r["block_time"] || e["duration_ns"] != r["duration_ns"] ||
			e["connections"] != r["connections"] || e["rate"] != r["rate"] || e["size"] != r["size"] {
			if exportDiffers < 5 {
				t.Errorf("tx %s: the tool's row %v, the export's %v", r["tx_hash"], r, e)
			}
			exportDiffers++
		}
	}
	t.Logf("export: %d rows; the tool's %d rows of the run all equal in the export but %d", len(exported), len(theirs), exportDiffers)

	in, err := analysis.Load(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := analysis.Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]int64{}
	var restricted []float64
	left := map[int64]int{} // height -> our H+1 txs above the counted blocks
	for _, r := range rows {
		if r.State != rundir.StateCommitted || !r.HasNext {
			continue
		}
		if r.Height > counted {
			left[r.Height]++
			continue
		}
		mine[r.Hash] = int64(math.Round(r.LatencyNextMs * 1e6))
		restricted = append(restricted, r.LatencyNextMs)
	}
	var onlyMine, onlyTheirs, differ int
	var sum int64
	for h, d := range mine {
		td, ok := theirs[h]
		if !ok {
			onlyMine++
			continue
		}
		sum += d
		if d != td {
			if differ < 5 {
				t.Errorf("tx %s: our H+1 latency %d ns, report's %d ns", h, d, td)
			}
			differ++
		}
	}
	for h := range theirs {
		if _, ok := mine[h]; !ok {
			onlyTheirs++
		}
	}
	if onlyMine+onlyTheirs+differ > 0 {
		t.Errorf("tx sets differ (blocks <= %d): %d only ours, %d only the report's, %d with other latencies (of %d ours, %d theirs)",
			counted, onlyMine, onlyTheirs, differ, len(mine), len(theirs))
	}
	if len(mine) < res.Latency.N/2 {
		t.Errorf("only %d of %d txs in the compared blocks <= %d: the comparison says little", len(mine), res.Latency.N, counted)
	}
	t.Logf("store height %d: report counts blocks <= %d; left out of the comparison: %v (height: txs)", storeHeight, counted, left)

	// The means, through analyze's own cross-check on the identical set.
	sub := *res
	sub.LatencyBlock, sub.Latency = "H+1", analyze.Summarize(restricted)
	t.Logf("H+1 mean over the same %d txs: ours %.6f ms (exact %.6f ms), report's %.6f ms; all %d of ours: %.3f ms",
		len(restricted), sub.Latency.Avg, float64(sum)/float64(max(len(mine), 1))/1e6, float64(exp.Avg)/1e6, res.Latency.N, res.Latency.Avg)
	if err := analysis.CrossCheckLoadtime(&sub, *exp, time.Millisecond); err != nil {
		t.Error(err)
	}
}

// lastCommittedHeight is the height of a node's last "Committed state" log
// line: the height of its block store when it stopped.
func lastCommittedHeight(t *testing.T, logPath string) int64 {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	all := regexp.MustCompile(`Committed state\s.*\bheight=(\d+)`).FindAllSubmatch(data, -1)
	if len(all) == 0 {
		t.Fatalf("%s has no \"Committed state\" line", logPath)
	}
	h, err := strconv.ParseInt(string(all[len(all)-1][1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// dbBackend reads db_backend from a node's config.toml.
func dbBackend(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mm := regexp.MustCompile(`(?m)^db_backend\s*=\s*"([^"]+)"`).FindSubmatch(data)
	if mm == nil {
		t.Fatalf("%s has no db_backend", path)
	}
	return string(mm[1])
}

func runTool(t *testing.T, ctx context.Context, bin string, args ...string) string {
	t.Helper()
	// stdout is the report; stderr carries the database's own log lines
	// (pebble logs its WAL replay there).
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", bin, args, err, out, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", filepath.Base(bin), stderr.String())
	}
	return string(out)
}

// uuidString formats 16 bytes as github.com/google/uuid prints them.
func uuidString(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
