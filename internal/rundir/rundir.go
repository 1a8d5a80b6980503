// Package rundir owns the run directory: the name, record type, header and
// codec of every file in it, and its layout. Every stage writes its raw
// records here as they happen, and every later stage (analyze, report,
// compare) reads only from here, through the codecs of this package, so an
// interrupted run stays readable and a report can be re-rendered with no
// node running.
//
// Layout of runs/<timestamp>-<name>/ (record type and codec in brackets):
//
//	manifest.toml      the manifest as given
//	manifest.source    the absolute path it was read from (relative paths inside resolve against its directory)
//	plan.json          the resolved testnet (plan.Testnet)
//	state.json         every resource the runner created, written as created (infra/local)
//	events.jsonl       timestamped events: node started, ready, crashed, load start/stop … [Event]
//	homes/<node>/      node homes (config, data)
//	logs/<node>.log    node stdout+stderr (and <node>-app.log for socket apps)
//	sent.csv           one row per tx the generator attempted, as it happens (load) [Sent, SentCSV]
//	load.json          the generator's own summary: expected, attempted, lag (scenario) [LoadSummary]
//	mempool.csv        every node's mempool size, polled during the run (harvest) [MempoolSample, MempoolCSV]
//	blocks.csv         one row per block in the run's height range (harvest) [Block, BlocksCSV]
//	block_txs.csv      every tx of those blocks with its result code (harvest) [BlockTx, BlockTxsCSV]
//	harvest.json       the harvested height range and how the drain ended (harvest) [Harvest]
//	txs.csv            one row per sent tx with its end state and latency (analyze) [Tx, TxsCSV]
//	results.json       summary of the run, with schema_version (analyze) [Results]; gossip runs: its "gossip" section [GossipResults]
//	published.csv      gossip: every message the harness asked a host to publish (load) [Published, PublishedCSV]
//	traces/<node>.csv  gossip: each host's own event trace (harvest) [GossipEvent, GossipTraceCSV]
//	deliveries.csv     gossip: one row per (message, other host) with its end state (internal/kinds/gossipsub/analysis) [Delivery, DeliveriesCSV]
//	heights.csv        every node's height and catching_up, polled during a run with faults (scenario) [HeightSample, HeightsCSV]
//	faults.json        each perturbation's effect and each rotate cycle (analyze.FaultEffects) [FaultResults]
//	metrics/           (collect) samples.csv.gz [Sample, SamplesCSV], proc.csv [Proc, ProcCSV],
//	                   host.csv [Host, HostCSV], scrape_errors.csv [ScrapeError, ScrapeErrorsCSV],
//	                   machines.csv [MachineLoad, MachinesCSV] (each machine of a swarm run),
//	                   machine.json [Machine]
//	linkem/            link emulation (testnet): linkem.json, matrix.csv, the userspace switch's
//	                   lateness.jsonl [LinkemLatenessSample, LinkemLatenessSeries] and counters.prom
//	                   [LinkemCounters], and the analysis's lateness.json [LinkLateness]
//	prometheus/        config and TSDB of the optional Prometheus server (promserver)
//	report.md, report.html, plots/   the report (report)
//
// The parent directories of experiments (a sweep's, a comparison's, a soak's
// run directory, a qa's) have the same contract: one record file each,
// whose codec and schema version live here (Record: SweepRecord,
// CompareRecord, SoakRecord), and one helper claims every directory of
// them (Claim, ClaimStamped).
package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// File names inside a run directory.
const (
	Manifest = "manifest.toml"
	// ManifestSource holds the absolute path the manifest was read from, so
	// relative paths inside the copy (a zone CSV) resolve as they did.
	ManifestSource = "manifest.source"
	Plan           = "plan.json"
	State          = "state.json"
	Events         = "events.jsonl"
	Homes          = "homes"
	Logs           = "logs"
	Metrics        = "metrics"
	// SheetFile is one row per run of an experiment directory (sweep,
	// compare, soak, qa, or a run): written when its command ends
	// (history.Sheet), linked from its report.
	SheetFile = "summary.csv"
	// OpenMetricsFile and LoadtimeFile are `benchnet export`'s other
	// formats, written into the directory unless -o names another file.
	OpenMetricsFile = "metrics.om"
	LoadtimeFile    = "loadtime.csv"
)

// Dir is one run directory.
type Dir struct {
	Path string

	mu     sync.Mutex
	events *os.File
}

// Create makes a new run directory root/<timestamp>-<name>, or
// <timestamp>-<name>-2, -3 … when that exists. The directory is claimed with
// an exclusive mkdir, so concurrent calls never share one.
func Create(root, name string, now time.Time) (*Dir, error) {
	path, err := ClaimStamped(root, name, now, Homes, Logs, Metrics)
	if err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	return &Dir{Path: path}, nil
}

// Open opens an existing run directory.
func Open(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open run directory: %s is not a directory", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return &Dir{Path: abs}, nil
}

// Join returns a path inside the run directory.
func (d *Dir) Join(elem ...string) string { return filepath.Join(append([]string{d.Path}, elem...)...) }

// WriteFile writes a whole file atomically (temp file + rename), so a reader
// never sees half of it.
func (d *Dir) WriteFile(name string, data []byte) error {
	return WriteAtomic(d.Join(name), data)
}

// WriteAtomic replaces path with data through a temporary file of its own
// and a rename: readers never see half a file, and two processes writing the
// same file at once (a harness and `benchnet down` on state.json) cannot
// rename each other's temporary file away.
func WriteAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", filepath.Base(path), err)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteJSON writes v as indented JSON.
func (d *Dir) WriteJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return d.WriteFile(name, append(data, '\n'))
}

// ReadJSON reads a JSON file of the run directory into v.
func (d *Dir) ReadJSON(name string, v any) error {
	data, err := os.ReadFile(d.Join(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// Event is one line of events.jsonl.
type Event struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"` // e.g. node_started, node_ready, node_exited, load_started
	Node   string    `json:"node,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// Event appends one event to events.jsonl and flushes it to the file.
func (d *Dir) Event(kind, node, detail string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.events == nil {
		f, err := os.OpenFile(d.Join(Events), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("open events: %w", err)
		}
		d.events = f
	}
	line, _ := json.Marshal(Event{Time: time.Now().UTC(), Kind: kind, Node: node, Detail: detail})
	_, err := d.events.Write(append(line, '\n'))
	return err
}

// ReadEvents reads events.jsonl; a missing file is no events.
func (d *Dir) ReadEvents() ([]Event, error) {
	data, err := os.ReadFile(d.Join(Events))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Event
	for i, line := range splitLines(data) {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			// A crash can cut the last line; everything before it is good.
			return out, fmt.Errorf("events.jsonl:%d: %w", i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range data {
		if c == '\n' {
			if i > start {
				out = append(out, data[start:i])
			}
			start = i + 1
		}
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out
}

// Close flushes and closes open files.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.events != nil {
		err := d.events.Close()
		d.events = nil
		return err
	}
	return nil
}

// ManifestPaths returns the path of the run's copy of its manifest and the
// absolute path of the original ("" when not recorded, e.g. a built-in).
func (d *Dir) ManifestPaths() (copyPath, source string) {
	b, err := os.ReadFile(d.Join(ManifestSource))
	if err == nil {
		source = strings.TrimSpace(string(b))
	}
	return d.Join(Manifest), source
}
