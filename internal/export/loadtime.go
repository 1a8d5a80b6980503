package export

import (
	"cmp"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/rundir"
)

// LoadtimeHeader is the header of `loadtime report --csv` (CometBFT
// test/loadtime/cmd/report), which latency_throughput.py and
// latency_plotter.py read.
var LoadtimeHeader = []string{"experiment_id", "block_time", "duration_ns", "tx_hash", "connections", "rate", "size"}

// Loadtime writes loadtime report's raw CSV for every run directory under
// dir (dir itself, or each cell of a sweep, each run of a compare or QA):
// one row per committed run tx whose next block was harvested, as the tool
// does it: block_time is the time of the block after the tx's (H+1, the
// time its block was committed) and duration_ns that time minus the tx's
// send time, so the mean of duration_ns is results.json's latency_avg. The
// experiment ID is the run's (the UUID benchnet writes into loadtime
// payloads, from the load's run id); connections, rate (per connection, rounded as the tool's
// integer flag) and size are the run's load. It returns the run
// directories written, in order.
func Loadtime(w io.Writer, dir string) ([]string, error) {
	runs, err := RunDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s holds no finished run (no %s beside a %s)", dir, rundir.TxsCSV.Name, rundir.Plan)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(LoadtimeHeader); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := loadtimeRun(cw, r); err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
	}
	cw.Flush()
	return runs, cw.Error()
}

func loadtimeRun(cw *csv.Writer, dir string) error {
	d := &rundir.Dir{Path: dir}
	t, err := readPlan(dir)
	if err != nil {
		return err
	}
	// The payloads carry the load's run id (load.json, state.json's);
	// results.json's run_id names the directory.
	runID := ""
	if ls, err := d.ReadLoad(); err == nil {
		runID = ls.RunID
	}
	if runID == "" {
		var st struct {
			RunID string `json:"run_id"`
		}
		if d.ReadJSON(rundir.State, &st) == nil {
			runID = st.RunID
		}
	}
	if runID == "" {
		if res, err := d.ReadResults(); err == nil {
			runID = res.RunID
		}
	}
	if runID == "" {
		return fmt.Errorf("no run id: none of load.json, %s, %s", rundir.State, rundir.ResultsFile)
	}
	blocks, _, err := rundir.BlocksCSV.ReadFile(rundir.BlocksCSV.Path(d))
	if err != nil {
		return fmt.Errorf("read %s: %w", rundir.BlocksCSV.Name, err)
	}
	timeOf := make(map[int64]int64, len(blocks))
	for _, b := range blocks {
		timeOf[b.Height] = b.TimeNs
	}
	txs, _, err := rundir.TxsCSV.ReadFileFilter(rundir.TxsCSV.Path(d), func(x *rundir.Tx) bool {
		return x.State == rundir.StateCommitted && x.Height > 0
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", rundir.TxsCSV.Name, err)
	}
	slices.SortStableFunc(txs, func(a, b rundir.Tx) int { return cmp.Compare(a.Height, b.Height) })
	id := uuidOf(runID)
	conns, rate, size := "0", "0", "0"
	if t != nil {
		conns = strconv.Itoa(t.Load.Connections)
		rate = strconv.FormatInt(int64(math.Round(t.Load.Rate)), 10)
		size = strconv.Itoa(t.Load.Size)
	}
	for _, x := range txs {
		next, ok := timeOf[x.Height+1]
		if !ok {
			continue // the tool skips a tx whose next block it has not
		}
		rec := []string{id, strconv.FormatInt(next, 10), strconv.FormatInt(next-x.SentNs, 10), x.Hash, conns, rate, size}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

// uuidOf is the run's experiment ID as loadtime prints it: the 16 bytes
// benchnet writes into its loadtime payloads (load.RunUUID: SHA-256 of the
// run id) in the UUID's 8-4-4-4-12 form.
func uuidOf(runID string) string {
	b := load.RunUUID(runID)
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// RunDirs lists the finished run directories at or under dir: dir itself
// when it is one, else every directory below it holding txs.csv (or, for
// a gossip run, results.json) beside plan.json, in path order. A sweep's
// cells, a compare's runs and a QA's steps are all found this way.
func RunDirs(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	var out []string
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			return nil
		}
		if isRun(p) {
			out = append(out, p)
			return filepath.SkipDir // a run holds no other run
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

func isRun(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, rundir.Plan)); err != nil {
		return false
	}
	for _, f := range []string{rundir.TxsCSV.Name, rundir.ResultsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
