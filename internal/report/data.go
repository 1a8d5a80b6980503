package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// run is everything the report reads from a run directory. Every part is
// optional: a missing or unreadable file leaves its part empty and adds a
// line to problems, which the report lists; it never stops the report.
type run struct {
	dir        *rundir.Dir
	manifest   []byte
	plan       *plan.Testnet
	results    *analyze.Results
	machine    *collect.Machine
	provenance []provenance
	events     []rundir.Event
	txs        []txRow
	blocks     []blockRow
	mempool    []nodeValue                 // mempool.csv
	samples    map[string][]collect.Sample // by metric, sorted by (node, time)
	proc       []procRow
	host       []hostRow
	problems   []string
	// t0 is the origin of every time axis (unix ns); t0From says what it is.
	t0     int64
	t0From string
}

type provenance struct{ file, text string }

type txRow struct {
	node        string
	state       string
	sentNs      int64
	height      int64
	blockTimeNs int64
	latency     float64 // ms, of the block the results name (H or H+1)
	hasLatency  bool
}

type blockRow struct {
	height, timeNs int64
	numTxs, runTxs int
	sizeBytes      int64
}

type nodeValue struct {
	timeNs int64
	node   string
	value  float64
}

type procRow struct {
	timeNs   int64
	node     string
	rssBytes float64
	cpuSec   float64
}

type hostRow struct {
	timeNs            int64
	load1             float64
	cpuBusy, cpuTotal float64
	cpus              int
}

// metricsWanted are the series the plots use; samples.csv.gz holds every
// series, the report keeps only these in memory.
var metricsWanted = map[string]bool{
	"cometbft_mempool_size":               true,
	"cometbft_p2p_peers":                  true,
	"cometbft_consensus_rounds":           true,
	"cometbft_consensus_height":           true,
	"cometbft_consensus_total_txs":        true,
	"cometbft_consensus_block_size_bytes": true,
	"process_resident_memory_bytes":       true,
}

func load(path string) (*run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRunDir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrNotRunDir, path)
	}
	if !isRunDir(path) {
		return nil, fmt.Errorf("%w: %s has none of %s, %s, %s, %s, %s", ErrNotRunDir, path,
			rundir.Plan, rundir.Manifest, rundir.Events, analyze.TxsFile, analyze.ResultsFile)
	}
	dir, err := rundir.Open(path)
	if err != nil {
		return nil, err
	}
	r := &run{dir: dir, samples: map[string][]collect.Sample{}}
	r.note(r.loadManifest())
	r.note(r.loadJSON())
	r.note(r.loadProvenance())
	evs, err := dir.ReadEvents()
	r.events = evs
	r.note(err)
	r.note(r.loadTxs())
	r.note(r.loadBlocks())
	r.note(r.loadMempool())
	r.note(r.loadSamples())
	r.note(r.loadProc())
	r.note(r.loadHost())
	r.origin()
	return r, nil
}

// ErrNotRunDir is returned for a path that is not a run directory.
var ErrNotRunDir = errors.New("not a run directory")

// isRunDir: a directory with at least one file only a run writes.
func isRunDir(path string) bool {
	for _, f := range []string{rundir.Plan, rundir.Manifest, rundir.Events, analyze.TxsFile, analyze.ResultsFile} {
		if _, err := os.Stat(filepath.Join(path, f)); err == nil {
			return true
		}
	}
	return false
}

func (r *run) note(err error) {
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.problems = append(r.problems, strings.ReplaceAll(err.Error(), r.dir.Path+"/", ""))
	}
}

func (r *run) loadManifest() error {
	b, err := os.ReadFile(r.dir.Join(rundir.Manifest))
	r.manifest = b
	return err
}

func (r *run) loadJSON() error {
	var errs []error
	var p plan.Testnet
	if err := r.dir.ReadJSON(rundir.Plan, &p); err == nil {
		r.plan = &p
	} else {
		errs = append(errs, err)
	}
	var res analyze.Results
	if err := r.dir.ReadJSON(analyze.ResultsFile, &res); err == nil {
		r.results = &res
	} else {
		errs = append(errs, err)
	}
	var m collect.Machine
	if err := r.dir.ReadJSON(collect.MetricsPath(collect.MachineFile), &m); err == nil {
		r.machine = &m
	} else {
		errs = append(errs, err)
	}
	for _, e := range errs {
		r.note(e)
	}
	return nil
}

func (r *run) loadProvenance() error {
	files, err := filepath.Glob(r.dir.Join("provenance", "*.txt"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		r.provenance = append(r.provenance, provenance{filepath.Base(f), string(b)})
	}
	return nil
}

// csvTable reads a CSV file with a header row and calls row with a lookup
// by column name. A cut last line (an interrupted run) ends the table.
func csvTable(path string, need []string, row func(col func(string) string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: header: %w", filepath.Base(path), err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	for _, n := range need {
		if _, ok := idx[n]; !ok {
			return fmt.Errorf("%s: no column %q", filepath.Base(path), n)
		}
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", filepath.Base(path), line, err)
		}
		col := func(name string) string {
			if i, ok := idx[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if err := row(col); err != nil {
			return fmt.Errorf("%s:%d: %w", filepath.Base(path), line, err)
		}
	}
}

func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseFloat(s, 64)
}

// ints parses several integer cells, reporting the first bad one.
func ints(col func(string) string, names ...string) ([]int64, error) {
	out := make([]int64, len(names))
	for i, n := range names {
		v, err := parseInt(col(n))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[i] = v
	}
	return out, nil
}

func (r *run) latencyColumn() string {
	if r.results != nil && r.results.LatencyBlock == "H+1" {
		return "latency_next_ms"
	}
	return "latency_ms"
}

func (r *run) loadTxs() error {
	lc := r.latencyColumn()
	return csvTable(r.dir.Join(analyze.TxsFile), analyze.TxsHeader, func(col func(string) string) error {
		v, err := ints(col, "sent_ns", "height", "block_time_ns")
		if err != nil {
			return err
		}
		t := txRow{node: col("node"), state: col("state"), sentNs: v[0], height: v[1], blockTimeNs: v[2]}
		if s := col(lc); s != "" {
			if t.latency, err = strconv.ParseFloat(s, 64); err != nil {
				return fmt.Errorf("%s: %w", lc, err)
			}
			t.hasLatency = true
		}
		r.txs = append(r.txs, t)
		return nil
	})
}

func (r *run) loadBlocks() error {
	return csvTable(r.dir.Join(analyze.BlocksFile), analyze.BlocksHeader, func(col func(string) string) error {
		v, err := ints(col, "height", "time_ns", "num_txs", "run_txs", "size_bytes")
		if err != nil {
			return err
		}
		r.blocks = append(r.blocks, blockRow{v[0], v[1], int(v[2]), int(v[3]), v[4]})
		return nil
	})
}

func (r *run) loadMempool() error {
	return csvTable(r.dir.Join(analyze.MempoolFile), analyze.MempoolHeader, func(col func(string) string) error {
		t, err := parseInt(col("time_ns"))
		if err != nil {
			return err
		}
		v, err := parseFloat(col("size"))
		if err != nil {
			return err
		}
		r.mempool = append(r.mempool, nodeValue{t, col("node"), v})
		return nil
	})
}

func (r *run) loadSamples() error {
	ss, err := collect.ReadSamples(r.dir.Join(rundir.Metrics, collect.SamplesFile), func(m string) bool { return metricsWanted[m] })
	for _, s := range ss {
		r.samples[s.Metric] = append(r.samples[s.Metric], s)
	}
	for _, v := range r.samples {
		sort.SliceStable(v, func(i, j int) bool {
			if v[i].Node != v[j].Node {
				return v[i].Node < v[j].Node
			}
			return v[i].TimeNs < v[j].TimeNs
		})
	}
	return err
}

func (r *run) loadProc() error {
	return csvTable(r.dir.Join(rundir.Metrics, collect.ProcFile), collect.ProcHeader, func(col func(string) string) error {
		t, err := parseInt(col("time_ns"))
		if err != nil {
			return err
		}
		rss, err1 := parseFloat(col("rss_bytes"))
		cpu, err2 := parseFloat(col("cpu_seconds"))
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		r.proc = append(r.proc, procRow{t, col("node"), rss, cpu})
		return nil
	})
}

func (r *run) loadHost() error {
	return csvTable(r.dir.Join(rundir.Metrics, collect.HostFile), collect.HostHeader, func(col func(string) string) error {
		t, err := parseInt(col("time_ns"))
		if err != nil {
			return err
		}
		l1, e1 := parseFloat(col("load1"))
		b, e2 := parseFloat(col("cpu_busy_seconds"))
		tot, e3 := parseFloat(col("cpu_total_seconds"))
		n, e4 := parseInt(col("cpus"))
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return err
		}
		r.host = append(r.host, hostRow{t, l1, b, tot, int(n)})
		return nil
	})
}

// origin picks t = 0 of the time axes from the data alone: the first event
// (the run's own start), else the first tx sent, else the first sample or
// block.
func (r *run) origin() {
	for _, e := range r.events {
		if t := e.Time.UnixNano(); r.t0From == "" || t < r.t0 {
			r.t0, r.t0From = t, "the first event ("+e.Kind+")"
		}
	}
	if r.t0From != "" {
		return
	}
	first := func(what string, t int64) {
		if t > 0 && (r.t0From == "" || t < r.t0) {
			r.t0, r.t0From = t, what
		}
	}
	for _, t := range r.txs {
		first("the first tx sent", t.sentNs)
	}
	if r.t0From != "" {
		return
	}
	for _, ss := range r.samples {
		for _, s := range ss {
			first("the first metrics sample", s.TimeNs)
		}
	}
	for _, b := range r.blocks {
		first("the first block", b.timeNs)
	}
}

// sec converts a unix-ns time to seconds since the origin.
func (r *run) sec(ns int64) float64 { return float64(ns-r.t0) / 1e9 }
