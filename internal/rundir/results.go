package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/judge"
)

// ResultsFile is results.json.
const ResultsFile = "results.json"

// ResultsSchema is the schema_version written into every results.json,
// "MAJOR.MINOR". A reader accepts its own major version and older ones
// (files without the field are pre-1.0); a minor bump only adds fields. Bump
// the major version when a field changes meaning or goes away.
//
// 2.0 (issue 23): block_stats is the per-block array of the Initia E2E
// benchmark's own output; the summary it was in 1.x is block_summary (a
// 1.x file decodes with its block_stats read as block_summary).
const ResultsSchema = "2.0"

// Results is results.json: the summary of one run (written by analyze). The
// block of fields after SchemaVersion follows the Initia E2E benchmark's
// result file so their tools can read ours.
type Results struct {
	SchemaVersion  string         `json:"schema_version"`
	Config         map[string]any `json:"config"`
	TotalSubmitted int            `json:"total_submitted"`
	TotalIncluded  int            `json:"total_included"`
	DurationSec    float64        `json:"duration_sec"`
	TxPerSecond    float64        `json:"tx_per_second"`
	AvgLatencyMs   float64        `json:"avg_latency_ms"`
	P50LatencyMs   float64        `json:"p50_latency_ms"`
	P95LatencyMs   float64        `json:"p95_latency_ms"`
	P99LatencyMs   float64        `json:"p99_latency_ms"`
	MaxLatencyMs   float64        `json:"max_latency_ms"`
	PeakMempool    int            `json:"peak_mempool_size"`
	// Blocks is Initia's block_stats: every block of the run's height range.
	Blocks []BlockEntry `json:"block_stats"`
	// BlockStats summarises them (block_stats in schema 1.x).
	BlockStats BlockStats `json:"block_summary"`

	RunID      string     `json:"run_id"`
	Accounting Accounting `json:"accounting"`
	// Drain is how the wait for empty mempools ended (from harvest.json);
	// nil when nothing was harvested or the run predates it.
	Drain *Drain `json:"drain,omitempty"`
	// Recovered is harvest.json's: set when these results were recovered
	// from a run that did not finish.
	Recovered *Recovery `json:"recovered,omitempty"`
	// GeneratorInvalid lists the invalid reasons (also in Invalid) that are
	// the load generator's: it could not keep its schedule, so the run
	// measured the client, not the network.
	GeneratorInvalid []string `json:"generator_invalid,omitempty"`
	// TestbedBound lists the reasons (also in Invalid) why the run's result
	// reflects the testbed, not the build: the generator fell behind (its
	// GeneratorInvalid reasons again), the chain committed nothing while
	// txs were sent, load from outside the run or CPU steal over the load
	// window (internal/analyze/testbed.go). Experiments leave such a run
	// out of their verdicts.
	TestbedBound []string `json:"testbed_bound,omitempty"`
	// Testbed is the machine over the load window, the figures the testbed
	// check read (absent without metrics/host.csv).
	Testbed *TestbedCheck `json:"testbed,omitempty"`
	// LatencyValid is false when the userspace link emulator missed its
	// lateness bound during the load (LatencyInvalid says by how much): the
	// latencies then include the emulator's own delay. Absent when no
	// userspace emulator ran (see analyze/linkem.go).
	LatencyValid   *bool         `json:"latency_valid,omitempty"`
	LatencyInvalid string        `json:"latency_invalid_reason,omitempty"`
	Linkem         *LinkLateness `json:"linkem_lateness,omitempty"`
	Latency        Stats         `json:"latency_ms"`
	LatencyBlock   string        `json:"latency_block"` // "H" or "H+1": whose header time ends a tx's latency
	// LatencyOther is the same distribution measured with the other block's time.
	LatencyOther Stats `json:"latency_ms_other_block"`
	// NegativeLatencies counts headline latencies below 0 (block time before
	// send time). With "H" that is expected: BFT time makes block H's time
	// about the commit time of H−1, before later txs of H were sent.
	NegativeLatencies int          `json:"negative_latencies"`
	Load              []ConnStats  `json:"load"`
	Valid             bool         `json:"valid"`
	Invalid           []string     `json:"invalid_reasons,omitempty"`
	Nodes             []NodeResult `json:"nodes"`
	// Gossip is set for gossip runs (internal/kinds/gossipsub/analysis).
	Gossip *GossipResults `json:"gossip,omitempty"`
	// Accounts is set for accounts workloads (accounts.go).
	Accounts *AccountsResults `json:"accounts,omitempty"`
	// The run-level views (runviews.go); absent for gossip runs and older runs.
	PerSecond *PerSecond  `json:"per_second,omitempty"`
	P2P       *P2PTraffic `json:"p2p,omitempty"`
	// ProposalTiming is set when the nodes export CometBFT v1's proposal
	// timestamp histogram (runviews.go).
	ProposalTiming  *ProposalTiming  `json:"proposal_timing,omitempty"`
	MempoolCapacity *MempoolCapacity `json:"mempool_capacity,omitempty"`
	// MempoolReach is set for a load sent to one node (reach.go).
	MempoolReach *MempoolReach `json:"mempool_reach,omitempty"`
	// Thresholds is the manifest's [thresholds] judged on this run, in
	// file order (set after analysis; absent when there are none).
	Thresholds []judge.ThresholdResult `json:"thresholds,omitempty"`
}

// Accounting: every sent tx ends in exactly one state.
// Sent == Committed + Rejected + Lost + Pending always holds.
type Accounting struct {
	Sent      int `json:"sent"`
	Committed int `json:"committed"`
	Rejected  int `json:"rejected"`
	Lost      int `json:"lost"`
	// Pending: in no block when an interrupted run stopped waiting for the
	// mempools (Drain.Complete false); not known to be lost.
	Pending    int `json:"pending"`
	Duplicates int `json:"duplicates"` // extra commits of an already committed tx
	// SendErrors are rows whose send failed (transport error): not in Sent.
	SendErrors int `json:"send_errors"`
	// SendErrorsCommitted are send errors whose tx reached a block anyway
	// (the write got through before the connection failed).
	SendErrorsCommitted int `json:"send_errors_committed"`
}

// Holds reports whether the accounting identity holds.
func (a Accounting) Holds() bool { return a.Sent == a.Committed+a.Rejected+a.Lost+a.Pending }

// Stats is a latency (or other) distribution in one unit.
type Stats struct {
	N   int     `json:"n"`
	Avg float64 `json:"avg"`
	Std float64 `json:"std"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// BlockStats summarises the blocks of the run's height range.
type BlockStats struct {
	FirstHeight  int64   `json:"first_height"`
	LastHeight   int64   `json:"last_height"`
	Blocks       int     `json:"blocks"`
	AvgTxs       float64 `json:"avg_txs_per_block"`
	MaxTxs       int     `json:"max_txs_per_block"`
	AvgBlockSec  float64 `json:"avg_block_interval_sec"`
	AvgSizeBytes float64 `json:"avg_block_size_bytes"`
}

// ConnStats certifies the load generator per connection: target vs achieved
// rate and how far actual sends lagged intended ones.
type ConnStats struct {
	Node       string  `json:"node"`
	Conn       int     `json:"conn"`
	Sent       int     `json:"sent"`
	TargetRate float64 `json:"target_rate"`
	Achieved   float64 `json:"achieved_rate"`
	LagP99Ms   float64 `json:"lag_p99_ms"`
	LagMaxMs   float64 `json:"lag_max_ms"`
	Errors     int     `json:"errors"`
	// BlockedS is the generator's wait on the node's unread queue
	// (load.json BlockedS): the node's backpressure.
	BlockedS float64 `json:"blocked_s,omitempty"`
}

// NodeResult is what happened to one node during the run.
type NodeResult struct {
	Name        string `json:"name"`
	Sent        int    `json:"sent"`
	PeakMempool int    `json:"peak_mempool"`
	Exited      bool   `json:"exited"` // the node died during the run (gossip runs: or a [[perturb]] step killed or stopped it)
	Detail      string `json:"detail,omitempty"`
	// DownSec is how long the node was down (exited, killed, stopped) in
	// all, and Outages every interval it was down, paused or cut off
	// (gossip runs).
	DownSec float64  `json:"down_sec,omitempty"`
	Outages []Outage `json:"outages,omitempty"`
}

// Outage is one interval a node was out during a run, from events.jsonl.
type Outage struct {
	Cause   string  `json:"cause"`    // down (died, killed, stopped), paused, cut_off (disconnected or partitioned)
	Event   string  `json:"event"`    // the events.jsonl kind that began it (node_exited, node_kill, node_pause, node_disconnect, ...)
	StartNs int64   `json:"start_ns"` // unix ns
	EndNs   int64   `json:"end_ns"`   // unix ns: the restart, resume or heal; the run's end (last event or publication) when nothing undid it
	Sec     float64 `json:"sec"`
	Undone  bool    `json:"undone"` // a restart, resume or heal ended it
}

// EncodeResults is results.json's encoding of r, with the current
// schema_version.
func EncodeResults(r *Results) ([]byte, error) {
	r.SchemaVersion = ResultsSchema
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<" and ">" readable in invalid_reasons
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode %s: %w", ResultsFile, err)
	}
	return buf.Bytes(), nil
}

// DecodeResults decodes a results.json, refusing a schema of a newer major
// version than ResultsSchema: its fields may not mean what this build thinks.
func DecodeResults(data []byte) (*Results, error) {
	var r struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ResultsFile, err)
	}
	got := 0 // written before schema_version existed: 0.x
	if r.SchemaVersion != "" {
		var err error
		if got, err = schemaMajor(r.SchemaVersion); err != nil {
			return nil, fmt.Errorf("%s: schema_version %q: %w", ResultsFile, r.SchemaVersion, err)
		}
	}
	if got < 2 {
		return decodeResults1(data)
	}
	if want, _ := schemaMajor(ResultsSchema); got > want {
		return nil, fmt.Errorf("%s: schema_version %s is newer than this benchnet reads (%d.x): use a newer benchnet",
			ResultsFile, r.SchemaVersion, want)
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ResultsFile, err)
	}
	return &res, nil
}

// decodeResults1 reads a results.json of schema 0.x or 1.x, whose
// block_stats was the summary now in block_summary.
func decodeResults1(data []byte) (*Results, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ResultsFile, err)
	}
	if bs, ok := m["block_stats"]; ok {
		m["block_summary"] = bs
		delete(m, "block_stats")
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", ResultsFile, err)
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ResultsFile, err)
	}
	return &res, nil
}

func schemaMajor(v string) (int, error) {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want MAJOR.MINOR")
	}
	return n, nil
}

// ReadResults reads results.json.
func (d *Dir) ReadResults() (*Results, error) {
	data, err := os.ReadFile(d.Join(ResultsFile))
	if err != nil {
		return nil, err
	}
	return DecodeResults(data)
}

// WriteResults writes results.json atomically, setting its schema_version.
func (d *Dir) WriteResults(r *Results) error {
	data, err := EncodeResults(r)
	if err != nil {
		return err
	}
	return d.WriteFile(ResultsFile, data)
}

// LatencyOK says whether the latency results stand: not when the link
// emulator missed its bound.
func (r *Results) LatencyOK() bool { return r.LatencyValid == nil || *r.LatencyValid }

// TestbedCheck is the machine's CPU over a run's load window, from
// metrics/host.csv and metrics/proc.csv (analyze.CheckTestbed).
type TestbedCheck struct {
	FromNs int64 `json:"from_ns"` // the load window's start, unix ns
	ToNs   int64 `json:"to_ns"`   // its end
	// HostSec is the span between the host.csv samples around the window.
	HostSec float64 `json:"host_sec"`
	CPUs    int     `json:"cpus"`
	// BusyCores is the machine's busy CPU (all cores, steal excluded) over
	// HostSec, in cores; OwnCores the run's own processes' (nodes and the
	// harness, proc.csv); OutsideCores = BusyCores - OwnCores.
	BusyCores    float64 `json:"busy_cores"`
	OwnCores     float64 `json:"own_cores"`
	OutsideCores float64 `json:"outside_cores"`
	// StealPct is steal time over all CPU time in the window, in percent.
	StealPct float64 `json:"steal_pct"`
	// Processes names what OwnCores counts (proc.csv node names).
	Processes []string `json:"processes,omitempty"`
}
