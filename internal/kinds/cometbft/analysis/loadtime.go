package analysis

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Cross-checking against CometBFT's own tool.
//
// CometBFT's test/loadtime `report` reads a stopped node's block store:
//
//	go install github.com/cometbft/cometbft/test/loadtime/cmd/report@<release>
//	report --database-type goleveldb --data-dir <run dir>/homes/<node>/data
//
// (flags: --database-type, default goleveldb; --data-dir, required; --csv FILE
// dumps experiment_id,block_time,duration_ns,tx_hash,… rows; --oneline prints
// one comma-separated line per experiment.) It only understands txs made by
// loadtime's payload package (load.format = "loadtime"); anything else counts
// as "Total Invalid Tx".
//
// Which time it uses (test/loadtime/report/report.go, GenerateFromBlockStore):
// for every block H in base+1 … height−1 it takes the txs of block H−1 …
// i.e. "the transactions of the block of height H are used with the
// timestamp from the block of height H+1", and latency = time(H+1) − the
// payload's own timestamp (set by the generator when it built the tx). Its
// loop stops below the store's height, so the txs of the store's last TWO
// blocks are not counted (checked on v1.0.1 stores). So its Average Latency is our
// latency_next_ms averaged — our "H+1" — up to the gap between payload
// creation and sent_ns (well under 1 ms for our generator) and integer
// nanosecond truncation of its mean. Its Standard Deviation is gonum's
// sample standard deviation, as our Std.

// LoadtimeStats is one experiment of `report`'s output.
type LoadtimeStats struct {
	ID                      string
	Connections, Rate, Size int
	ValidTxs                int
	NegativeLatencies       int
	Min, Max, Avg, StdDev   time.Duration
}

// LoadtimeReport is the whole output of `report`.
type LoadtimeReport struct {
	Experiments []LoadtimeStats
	InvalidTxs  int
}

// ParseLoadtimeReport parses the default (multi-line) output of loadtime's
// report, as printed by test/loadtime/cmd/report:
//
//	Experiment ID: <uuid>
//
//		Connections: 1
//		Rate: 1000
//		Size: 1024
//
//		Total Valid Tx: 9000
//		Total Negative Latencies: 0
//		Minimum Latency: 521.110234ms
//		Maximum Latency: 1.80412334s
//		Average Latency: 1.100023411s
//		Standard Deviation: 221.00876ms
//
// (durations are Go's time.Duration.String()).
//
//	Total Invalid Tx: 0
func ParseLoadtimeReport(out string) (*LoadtimeReport, error) {
	rep := &LoadtimeReport{}
	var cur *LoadtimeStats
	sawInvalid := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("loadtime report:%d: unexpected line %q", ln, line)
		}
		val = strings.TrimSpace(val)
		if key == "Experiment ID" {
			rep.Experiments = append(rep.Experiments, LoadtimeStats{ID: val})
			cur = &rep.Experiments[len(rep.Experiments)-1]
			continue
		}
		if key == "Total Invalid Tx" {
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, fmt.Errorf("loadtime report:%d: %s: %w", ln, key, err)
			}
			rep.InvalidTxs, sawInvalid = n, true
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("loadtime report:%d: %q before any Experiment ID", ln, line)
		}
		var err error
		switch key {
		case "Connections":
			cur.Connections, err = strconv.Atoi(val)
		case "Rate":
			cur.Rate, err = strconv.Atoi(val)
		case "Size":
			cur.Size, err = strconv.Atoi(val)
		case "Total Valid Tx":
			cur.ValidTxs, err = strconv.Atoi(val)
		case "Total Negative Latencies":
			cur.NegativeLatencies, err = strconv.Atoi(val)
		case "Minimum Latency":
			cur.Min, err = time.ParseDuration(val)
		case "Maximum Latency":
			cur.Max, err = time.ParseDuration(val)
		case "Average Latency":
			cur.Avg, err = time.ParseDuration(val)
		case "Standard Deviation":
			cur.StdDev, err = time.ParseDuration(val)
		default:
			err = fmt.Errorf("unknown field")
		}
		if err != nil {
			return nil, fmt.Errorf("loadtime report:%d: %s: %w", ln, key, err)
		}
	}
	if !sawInvalid {
		return nil, fmt.Errorf("loadtime report: no \"Total Invalid Tx\" line: output cut or not from report")
	}
	return rep, nil
}

// CrossCheckLoadtime compares our H+1 mean latency with report's Average
// Latency of one experiment. They measure the same thing (see above) and
// must agree within tolerance (1 ms is the bar); the error says by how much
// they differ otherwise. Counts must agree too: report counts every loadtime
// tx of the chain except those of the store's last two blocks; we count
// committed run txs with a known H+1 time, so compare over the same blocks.
func CrossCheckLoadtime(r *rundir.Results, lt LoadtimeStats, tolerance time.Duration) error {
	ours := r.Latency
	if r.LatencyBlock != "H+1" {
		ours = r.LatencyOther
	}
	if ours.N != lt.ValidTxs {
		return fmt.Errorf("loadtime cross-check: we have %d H+1 latencies, report has %d valid txs", ours.N, lt.ValidTxs)
	}
	theirs := float64(lt.Avg) / 1e6
	if d := ours.Avg - theirs; d > float64(tolerance)/1e6 || -d > float64(tolerance)/1e6 {
		return fmt.Errorf("loadtime cross-check: our H+1 mean %.3f ms vs report's %.3f ms: differ by %.3f ms > %s",
			ours.Avg, theirs, d, tolerance)
	}
	return nil
}
