package chainreport

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

// run is everything the report reads from a run directory, through the
// run directory's codecs (package rundir). Every part is optional: a
// missing or unreadable file leaves its part empty and adds a line to
// problems, which the report lists; it never stops the report.
type run struct {
	dir        *rundir.Dir
	manifest   []byte
	plan       *plan.Testnet
	results    *rundir.Results
	machine    *rundir.Machine
	provenance []provenance
	events     []rundir.Event
	txs        []txRow
	blocks     []blockRow
	mempool    []nodeValue                // mempool.csv
	samples    map[string][]rundir.Sample // by metricKey, sorted by (node, time)
	nodeNS     map[string]string          // node -> metrics namespace, from the plan
	nss        []string                   // namespaces(), computed once
	proc       []procRow
	host       []hostRow
	machines   map[string][]hostRow // machines.csv by machine (swarm runs)
	problems   []string
	// t0 is the origin of every time axis (unix ns); t0From says what it is.
	t0     int64
	t0From string
	zoom   report.Zoom // zoom.go; zero for the run's own report
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

// nodeMetrics are the node series the plots use, named without the node's
// metrics namespace (NAMESPACE_p2p_peers: "cometbft", "tendermint" or an
// instrumentation.namespace override, recorded per node in the plan).
// r.samples keys them so; samples.csv.gz holds every series, the report
// keeps only these and plainMetrics in memory.
var nodeMetrics = map[string]bool{
	"mempool_size":               true,
	"p2p_peers":                  true,
	"consensus_rounds":           true,
	"consensus_height":           true,
	"consensus_total_txs":        true,
	"consensus_block_size_bytes": true,
}

// plainMetrics are kept under their own name (no namespace).
var plainMetrics = map[string]bool{"process_resident_memory_bytes": true}

// metricKey is the key of a node's sample in r.samples: the series name
// without the node's namespace for nodeMetrics, the name itself for
// plainMetrics, "" for a series the report does not use. A node the plan
// does not name (or a run without a plan) may use any of the run's
// namespaces.
func (r *run) metricKey(node, metric string) string {
	if plainMetrics[metric] {
		return metric
	}
	nss := r.namespaces()
	if ns, ok := r.nodeNS[node]; ok {
		nss = []string{ns}
	}
	for _, ns := range nss {
		if k, ok := strings.CutPrefix(metric, ns+"_"); ok && nodeMetrics[k] {
			return k
		}
	}
	return ""
}

// namespaces are the metrics namespaces of the run's nodes, sorted;
// "cometbft" for a run whose plan predates them or is missing.
func (r *run) namespaces() []string {
	if r.nss == nil {
		seen := map[string]bool{}
		for _, ns := range r.nodeNS {
			if !seen[ns] {
				seen[ns] = true
				r.nss = append(r.nss, ns)
			}
		}
		if len(r.nss) == 0 {
			r.nss = []string{plan.DefaultNamespace}
		}
		sort.Strings(r.nss)
	}
	return r.nss
}

// nsPrefix is what precedes a node metric's name in the report's text:
// "cometbft_" for a CometBFT run, "tendermint_" for Tendermint Core,
// "{a,b}_" when the nodes export under several namespaces.
func (r *run) nsPrefix() string {
	nss := r.namespaces()
	if len(nss) == 1 {
		return nss[0] + "_"
	}
	return "{" + strings.Join(nss, ",") + "}_"
}

// metricName is the series name a reader finds in samples.csv.gz for key.
func (r *run) metricName(key string) string {
	if nodeMetrics[key] {
		return r.nsPrefix() + key
	}
	return key
}

// nsText rewrites the "cometbft_" series names of a fixed text to the
// run's namespace (unchanged for a CometBFT run).
func (r *run) nsText(s string) string {
	if p := r.nsPrefix(); p != "cometbft_" {
		return strings.ReplaceAll(s, "cometbft_", p)
	}
	return s
}

func load(path string) (*run, error) {
	if err := report.CheckRunDir(path); err != nil {
		return nil, err
	}
	dir, err := rundir.Open(path)
	if err != nil {
		return nil, err
	}
	r := &run{dir: dir, samples: map[string][]rundir.Sample{}}
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
	r.note(r.loadMachines())
	r.origin()
	return r, nil
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
	if p, err := plan.Read(r.dir.Path); err == nil {
		r.plan = p
	} else {
		errs = append(errs, err)
	}
	if res, err := r.dir.ReadResults(); err == nil {
		r.results = res
	} else {
		errs = append(errs, err)
	}
	if m, err := r.dir.ReadMachine(); err == nil {
		r.machine = m
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

// readCSV reads one CSV file of the run directory with its codec and
// calls row for each record. A cut last line (an interrupted run) is
// skipped and listed as a problem.
func readCSV[T any](r *run, c *rundir.CSV[T], row func(*T)) error {
	rows, truncated, err := c.ReadFile(c.Path(r.dir))
	for i := range rows {
		row(&rows[i])
	}
	if truncated {
		r.problems = append(r.problems, fmt.Sprintf("%s: last line truncated (interrupted run?); skipped", c.Name))
	}
	return err
}

// latencyColumn is txs.csv's column of the headline latency.
func (r *run) latencyColumn() string {
	if r.results != nil && r.results.LatencyBlock == "H+1" {
		return "latency_next_ms"
	}
	return "latency_ms"
}

func (r *run) loadTxs() error {
	block := ""
	if r.results != nil {
		block = r.results.LatencyBlock
	}
	return readCSV(r, rundir.TxsCSV, func(t *rundir.Tx) {
		row := txRow{node: t.Node, state: t.State, sentNs: t.SentNs, height: t.Height, blockTimeNs: t.BlockTimeNs}
		row.latency, row.hasLatency = t.Headline(block)
		r.txs = append(r.txs, row)
	})
}

func (r *run) loadBlocks() error {
	return readCSV(r, rundir.BlocksCSV, func(b *rundir.Block) {
		r.blocks = append(r.blocks, blockRow{b.Height, b.TimeNs, b.NumTxs, b.RunTxs, b.SizeBytes})
	})
}

func (r *run) loadMempool() error {
	return readCSV(r, rundir.MempoolCSV, func(m *rundir.MempoolSample) {
		r.mempool = append(r.mempool, nodeValue{m.TimeNs, m.Node, float64(m.Size)})
	})
}

func (r *run) loadSamples() error {
	r.nodeNS = map[string]string{}
	if r.plan != nil {
		for _, n := range r.plan.Nodes {
			r.nodeNS[n.Name] = n.Namespace()
		}
	}
	ss, truncated, err := rundir.SamplesCSV.ReadFileFilter(rundir.SamplesCSV.Path(r.dir),
		func(s *rundir.Sample) bool { return r.metricKey(s.Node, s.Metric) != "" })
	if truncated {
		r.problems = append(r.problems, rundir.SamplesCSV.Name+": truncated (interrupted run?); read up to its last flush")
	}
	for _, s := range ss {
		k := r.metricKey(s.Node, s.Metric)
		r.samples[k] = append(r.samples[k], s)
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
	return readCSV(r, rundir.ProcCSV, func(p *rundir.Proc) {
		r.proc = append(r.proc, procRow{p.TimeNs, p.Node, float64(p.RSSBytes), p.CPUSeconds})
	})
}

func (r *run) loadHost() error {
	return readCSV(r, rundir.HostCSV, func(h *rundir.Host) {
		r.host = append(r.host, hostRowOf(h))
	})
}

func hostRowOf(h *rundir.Host) hostRow {
	return hostRow{h.TimeNs, h.Load1, h.CPUBusySeconds, h.CPUTotalSeconds, h.CPUs}
}

func (r *run) loadMachines() error {
	return readCSV(r, rundir.MachinesCSV, func(m *rundir.MachineLoad) {
		if r.machines == nil {
			r.machines = map[string][]hostRow{}
		}
		r.machines[m.Machine] = append(r.machines[m.Machine], hostRowOf(&m.Host))
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
