package analyze

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files of the run directory this package reads or writes, and their CSV
// headers (the data contract: times are unix nanoseconds, one header row).
const (
	SentFile     = "sent.csv"      // load: one row per attempted tx
	MempoolFile  = "mempool.csv"   // harvest.MempoolPoller, during the run
	BlocksFile   = "blocks.csv"    // harvest: one row per block in range, plus H+1 of the last
	BlockTxsFile = "block_txs.csv" // harvest: one row per tx of those blocks
	HarvestFile  = "harvest.json"  // harvest: which range was harvested
	TxsFile      = "txs.csv"       // analyze: one row per sent.csv row
	ResultsFile  = "results.json"  // analyze
)

var (
	SentHeader     = []string{"seq", "conn", "node", "hash", "intended_ns", "sent_ns", "ack_ns", "result", "code", "log"}
	MempoolHeader  = []string{"time_ns", "node", "size"}
	BlocksHeader   = []string{"height", "time_ns", "num_txs", "run_txs", "size_bytes", "proposer"}
	BlockTxsHeader = []string{"height", "index", "hash", "code", "log"}
	TxsHeader      = []string{"seq", "node", "conn", "hash", "intended_ns", "sent_ns", "state", "code", "log",
		"height", "block_time_ns", "latency_ms", "latency_next_ms"}
)

// Results of sent.csv's result column.
const (
	ResultOK        = "ok"
	ResultRejected  = "rejected"
	ResultSendError = "send_error"
)

// States of txs.csv's state column.
const (
	StateCommitted = "committed"
	StateRejected  = "rejected"
	StateLost      = "lost"
	StateSendError = "send_error"
)

// SentRow is one row of sent.csv.
type SentRow struct {
	Seq        int64
	Conn       int
	Node       string
	Hash       string
	IntendedNs int64
	SentNs     int64
	AckNs      int64
	Result     string
	Code       uint32
	Log        string
}

// BlockRow is one row of blocks.csv.
type BlockRow struct {
	Height    int64
	TimeNs    int64
	NumTxs    int
	RunTxs    int
	SizeBytes int64
	Proposer  string
}

// BlockTx is one row of block_txs.csv: a tx as the chain holds it.
type BlockTx struct {
	Height int64
	Index  int
	Hash   string
	Code   uint32
	Log    string
}

// MempoolRow is one row of mempool.csv.
type MempoolRow struct {
	TimeNs int64
	Node   string
	Size   int
}

// HarvestInfo is harvest.json: the height range whose blocks are in
// blocks.csv. NextHeight (To+1, 0 if it could not be fetched) is there only
// for its time, which ends the H+1 latency of txs committed at To.
type HarvestInfo struct {
	RPCURL     string `json:"rpc_url"`
	From       int64  `json:"from_height"`
	To         int64  `json:"to_height"`
	NextHeight int64  `json:"next_height"`
	// Recovered is set when the blocks were read offline from a node's store
	// after the run did not finish (`benchnet analyze`), not from the live
	// chain at the end of the run.
	Recovered *Recovery `json:"recovered,omitempty"`
}

// Recovery says where the blocks of a run that did not finish came from.
type Recovery struct {
	Node    string `json:"node"`    // whose store was read
	Release string `json:"release"` // the release whose `inspect` served it
	Method  string `json:"method"`  // e.g. "cometbft inspect"
	Reason  string `json:"reason"`  // why the run's own harvest is missing
}

// errTruncated marks a cut last line: a crash mid-write leaves one, and
// everything before it is good.
var errTruncated = errors.New("last line truncated")

// readCSV reads path, checks the header and calls row for each record. A
// last record with too few fields is skipped and reported as errTruncated.
func readCSV(path string, header []string, row func(rec []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	name := filepath.Base(path)
	got, err := r.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file (no header)", name)
	}
	if err != nil {
		return fmt.Errorf("%s: header: %w", name, err)
	}
	if strings.Join(got, ",") != strings.Join(header, ",") {
		return fmt.Errorf("%s: header %q, want %q", name, strings.Join(got, ","), strings.Join(header, ","))
	}
	var short []string // a short record is fine only as the last one
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				if _, err2 := r.Read(); err2 == io.EOF {
					return errTruncated // e.g. a cut quoted field
				}
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		if short != nil {
			return fmt.Errorf("%s:%d: %d fields, want %d", name, line-1, len(short), len(header))
		}
		if len(rec) != len(header) {
			short = append([]string(nil), rec...)
			continue
		}
		if err := row(rec); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if short != nil {
		return errTruncated
	}
	return nil
}

// ReadSent reads sent.csv. truncated reports a cut last line (skipped).
func ReadSent(path string) (rows []SentRow, truncated bool, err error) {
	err = readCSV(path, SentHeader, func(rec []string) error {
		var s SentRow
		var err error
		p := parser{rec: rec}
		s.Seq = p.int64(0, "seq")
		s.Conn = int(p.int64(1, "conn"))
		s.Node = rec[2]
		s.Hash = strings.ToUpper(rec[3])
		s.IntendedNs = p.int64(4, "intended_ns")
		s.SentNs = p.int64(5, "sent_ns")
		s.AckNs = p.int64(6, "ack_ns")
		s.Result = rec[7]
		s.Code = uint32(p.int64(8, "code"))
		s.Log = rec[9]
		if p.err != nil {
			return p.err
		}
		switch s.Result {
		case ResultOK, ResultRejected, ResultSendError:
		default:
			err = fmt.Errorf("result %q: want ok, rejected or send_error", s.Result)
		}
		rows = append(rows, s)
		return err
	})
	if errors.Is(err, errTruncated) {
		return rows, true, nil
	}
	return rows, false, err
}

// ReadBlocks reads blocks.csv.
func ReadBlocks(path string) ([]BlockRow, error) {
	var rows []BlockRow
	err := readCSV(path, BlocksHeader, func(rec []string) error {
		p := parser{rec: rec}
		b := BlockRow{Height: p.int64(0, "height"), TimeNs: p.int64(1, "time_ns"), NumTxs: int(p.int64(2, "num_txs")),
			RunTxs: int(p.int64(3, "run_txs")), SizeBytes: p.int64(4, "size_bytes"), Proposer: rec[5]}
		rows = append(rows, b)
		return p.err
	})
	return rows, err
}

// ReadBlockTxs reads block_txs.csv.
func ReadBlockTxs(path string) ([]BlockTx, error) {
	var rows []BlockTx
	err := readCSV(path, BlockTxsHeader, func(rec []string) error {
		p := parser{rec: rec}
		t := BlockTx{Height: p.int64(0, "height"), Index: int(p.int64(1, "index")), Hash: strings.ToUpper(rec[2]),
			Code: uint32(p.int64(3, "code")), Log: rec[4]}
		rows = append(rows, t)
		return p.err
	})
	return rows, err
}

// ReadMempool reads mempool.csv; a cut last line is skipped.
func ReadMempool(path string) ([]MempoolRow, error) {
	var rows []MempoolRow
	err := readCSV(path, MempoolHeader, func(rec []string) error {
		p := parser{rec: rec}
		rows = append(rows, MempoolRow{TimeNs: p.int64(0, "time_ns"), Node: rec[1], Size: int(p.int64(2, "size"))})
		return p.err
	})
	if errors.Is(err, errTruncated) {
		err = nil
	}
	return rows, err
}

// WriteBlocks writes blocks.csv (and the caller's block_txs.csv via
// WriteBlockTxs) atomically.
func WriteBlocks(path string, rows []BlockRow) error {
	recs := [][]string{BlocksHeader}
	for _, b := range rows {
		recs = append(recs, []string{i64(b.Height), i64(b.TimeNs), strconv.Itoa(b.NumTxs), strconv.Itoa(b.RunTxs),
			i64(b.SizeBytes), b.Proposer})
	}
	return writeCSV(path, recs)
}

// WriteBlockTxs writes block_txs.csv atomically.
func WriteBlockTxs(path string, rows []BlockTx) error {
	recs := [][]string{BlockTxsHeader}
	for _, t := range rows {
		recs = append(recs, []string{i64(t.Height), strconv.Itoa(t.Index), t.Hash, strconv.FormatUint(uint64(t.Code), 10), t.Log})
	}
	return writeCSV(path, recs)
}

func writeCSV(path string, recs [][]string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(recs); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// parser collects the first conversion error of a record.
type parser struct {
	rec []string
	err error
}

func (p *parser) int64(i int, field string) int64 {
	if p.err != nil {
		return 0
	}
	s := p.rec[i]
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.err = fmt.Errorf("%s: %q is not an integer", field, s)
	}
	return v
}

// LoadSummaryFile is the load generator's own account of a run (written by
// the scenario from load.Summary); analyze reads only the counts it needs.
const LoadSummaryFile = "load.json"

// LoadSummary is the part of load.json analyze checks: whether the
// generator sent everything the configuration asked for.
type LoadSummary struct {
	Expected  int `json:"Expected"`
	Attempted int `json:"Attempted"`
}
