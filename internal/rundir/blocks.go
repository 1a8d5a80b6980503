package rundir

import (
	"strconv"
	"strings"
	"time"
)

// Block is one row of blocks.csv: a block of the run's height range (plus
// H+1 of the last one, for its time).
type Block struct {
	Height    int64
	TimeNs    int64 // header time
	NumTxs    int
	RunTxs    int // txs of this block listed in sent.csv
	SizeBytes int64
	Proposer  string
}

// BlocksCSV is blocks.csv (written by harvest, read by analyze and report).
var BlocksCSV = &CSV[Block]{
	Name:   "blocks.csv",
	Header: []string{"height", "time_ns", "num_txs", "run_txs", "size_bytes", "proposer"},
	encode: func(b *Block, f []string) {
		f[0], f[1], f[2], f[3] = i64(b.Height), i64(b.TimeNs), strconv.Itoa(b.NumTxs), strconv.Itoa(b.RunTxs)
		f[4], f[5] = i64(b.SizeBytes), b.Proposer
	},
	decode: func(b *Block, f *fields) {
		b.Height, b.TimeNs, b.NumTxs, b.RunTxs = f.Int64(0), f.Int64(1), f.Int(2), f.Int(3)
		b.SizeBytes, b.Proposer = f.Int64(4), f.Sym(5)
	},
}

// BlockTx is one row of block_txs.csv: a tx as the chain holds it.
type BlockTx struct {
	Height int64
	Index  int
	Hash   string
	Code   uint32 // the ABCI result code (0: ok)
	Log    string
}

// BlockTxsCSV is block_txs.csv (written by harvest, read by analyze).
var BlockTxsCSV = &CSV[BlockTx]{
	Name:   "block_txs.csv",
	Header: []string{"height", "index", "hash", "code", "log"},
	encode: func(t *BlockTx, f []string) {
		f[0], f[1], f[2], f[3], f[4] = i64(t.Height), strconv.Itoa(t.Index), t.Hash, strconv.FormatUint(uint64(t.Code), 10), t.Log
	},
	decode: func(t *BlockTx, f *fields) {
		t.Height, t.Index, t.Hash, t.Code, t.Log = f.Int64(0), f.Int(1), strings.ToUpper(f.Str(2)), f.Uint32(3), f.Str(4)
	},
}

// HarvestFile is harvest.json.
const HarvestFile = "harvest.json"

// Harvest is harvest.json: the height range whose blocks are in blocks.csv
// and how the wait for the mempools before it ended. NextHeight (To+1, 0
// if it could not be fetched) is there only for its time, which ends the
// H+1 latency of txs committed at To.
type Harvest struct {
	RPCURL     string `json:"rpc_url"`
	From       int64  `json:"from_height"`
	To         int64  `json:"to_height"`
	NextHeight int64  `json:"next_height"`
	// Drain is nil in run directories older than the field: their drain
	// always ran the full grace period.
	Drain *Drain `json:"drain,omitempty"`
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

// Drain is how the wait for empty mempools after the load ended.
type Drain struct {
	// Complete: every mempool was empty, or the whole grace period passed.
	// Only then is a tx that is in no block lost; otherwise it is pending.
	Complete bool `json:"complete"`
	Empty    bool `json:"empty"` // every mempool answered 0 in one round
	// Interrupted: the run was interrupted and the drain was bounded by
	// Bound instead of the grace period.
	Interrupted bool     `json:"interrupted"`
	WaitedSec   float64  `json:"waited_sec"`
	BoundSec    float64  `json:"bound_sec"` // the longest it was allowed to wait
	GraceSec    float64  `json:"grace_sec"` // the manifest's load.grace
	Left        string   `json:"left,omitempty"`
	Unreachable []string `json:"unreachable,omitempty"`
	// Nodes are the nodes the drain waited for: every node running when
	// it began (late joiners included, nodes not started left out).
	Nodes []string `json:"nodes,omitempty"`
}

// DrainSeconds converts a duration for Drain's fields.
func DrainSeconds(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / 1e9 }

// ReadHarvest reads harvest.json.
func (d *Dir) ReadHarvest() (*Harvest, error) {
	var h Harvest
	if err := d.ReadJSON(HarvestFile, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// WriteHarvest writes harvest.json.
func (d *Dir) WriteHarvest(h *Harvest) error { return d.WriteJSON(HarvestFile, h) }
