package analysis

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Input is everything Analyze reads from a run directory. Compute is a pure
// function of it, so tests build Inputs (or directories) by hand.
type Input struct {
	RunID         string
	Plan          *plan.Testnet // nil when plan.json is absent
	Sent          []rundir.Sent
	SentTruncated bool
	Blocks        []rundir.Block
	BlockTxs      []rundir.BlockTx
	Harvest       *rundir.Harvest // nil: every row of blocks.csv is in range
	Mempool       []rundir.MempoolSample
	Events        []rundir.Event
	LoadSummary   *rundir.LoadSummary // nil when load.json is absent
	// Host and Proc are metrics/host.csv and metrics/proc.csv (nil when
	// absent): the testbed check's machine figures.
	Host []rundir.Host
	Proc []rundir.Proc
}

// TxRow is one row of txs.csv with the sent.csv row it comes from.
type TxRow struct {
	rundir.Tx
	Sent rundir.Sent
}

// Analyze reads the run directory, writes txs.csv and results.json into it
// and returns the results. It fails only on unreadable input or a broken
// accounting identity (a bug); a run that measured nothing is returned with
// Valid=false and its reasons.
func Analyze(dir string) (*rundir.Results, error) {
	in, err := Load(dir)
	if err != nil {
		return nil, err
	}
	res, rows, err := Compute(in)
	if err != nil {
		return nil, err
	}
	if err := analyze.CheckLinks(dir, res); err != nil {
		return nil, err
	}
	if err := runViews(dir, in, res); err != nil {
		return nil, err
	}
	d := &rundir.Dir{Path: dir}
	if err := WriteTxs(rundir.TxsCSV.Path(d), rows); err != nil {
		return nil, err
	}
	if err := d.WriteResults(res); err != nil {
		return nil, err
	}
	return res, nil
}

// Load reads the files Compute needs. sent.csv is required; missing blocks
// files mean nothing was harvested.
func Load(dir string) (*Input, error) {
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	in := &Input{RunID: filepath.Base(d.Path)}
	if in.Sent, in.SentTruncated, err = rundir.SentCSV.ReadFile(rundir.SentCSV.Path(d)); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	if in.Plan, err = plan.Read(d.Path); errors.Is(err, fs.ErrNotExist) {
		in.Plan = nil
	} else if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	optional := func(err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		return nil
	}
	var e error
	in.Blocks, _, e = rundir.BlocksCSV.ReadFile(rundir.BlocksCSV.Path(d))
	if err := optional(e); err != nil {
		return nil, err
	}
	in.BlockTxs, _, e = rundir.BlockTxsCSV.ReadFile(rundir.BlockTxsCSV.Path(d))
	if err := optional(e); err != nil {
		return nil, err
	}
	// A cut last line of mempool.csv (the poller killed) is skipped.
	in.Mempool, _, e = rundir.MempoolCSV.ReadFile(rundir.MempoolCSV.Path(d))
	if err := optional(e); err != nil {
		return nil, err
	}
	if in.Harvest, e = d.ReadHarvest(); optional(e) != nil {
		return nil, optional(e)
	}
	// A cut last event line still leaves the events before it.
	in.Events, _ = d.ReadEvents()
	if in.LoadSummary, e = d.ReadLoad(); optional(e) != nil {
		return nil, optional(e)
	}
	// The collector's files, cut last lines skipped; an unreadable one
	// only leaves the testbed check without the machine's figures.
	in.Host, _, _ = rundir.HostCSV.ReadFile(rundir.HostCSV.Path(d))
	in.Proc, _, _ = rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d))
	return in, nil
}

// Compute matches sent txs to committed ones and summarizes the run.
func Compute(in *Input) (*rundir.Results, []TxRow, error) {
	res := &rundir.Results{RunID: in.RunID, Config: config(in.Plan), LatencyBlock: "H", Valid: true}
	if in.Plan != nil && in.Plan.Load.LatencyBlock == "H+1" {
		res.LatencyBlock = "H+1"
	}
	invalid := func(format string, a ...any) { res.Invalid = append(res.Invalid, fmt.Sprintf(format, a...)) }
	if in.SentTruncated {
		invalid("sent.csv: last line cut (interrupted run?)")
	}

	// Without a complete drain, a tx in no block may still have been on its
	// way: pending, not lost.
	noBlock := rundir.StateLost
	if in.Harvest != nil && in.Harvest.Drain != nil {
		res.Drain = in.Harvest.Drain
		if !in.Harvest.Drain.Complete {
			noBlock = rundir.StatePending
		}
	}

	if in.Harvest != nil {
		res.Recovered = in.Harvest.Recovered
	}

	blockAt := newBlockIndex(in.Blocks)
	inRange := func(h int64) bool {
		return in.Harvest == nil || (h >= in.Harvest.From && h <= in.Harvest.To)
	}

	// Commits per hash in chain order, as linked lists over the rows of
	// block_txs.csv in chain order (one map entry per hash, no slice each:
	// a cell holds a million of them).
	chain := make([]int32, len(in.BlockTxs))
	for i := range chain {
		chain[i] = int32(i)
	}
	chainLess := func(a, b int32) int {
		x, y := &in.BlockTxs[a], &in.BlockTxs[b]
		if x.Height != y.Height {
			return cmp.Compare(x.Height, y.Height)
		}
		return cmp.Compare(x.Index, y.Index)
	}
	if !slices.IsSortedFunc(chain, chainLess) {
		slices.SortStableFunc(chain, chainLess)
	}
	type hashCommits struct {
		head, tail int32 // positions in chain; head: the next commit not taken
		left       int32 // commits not taken
		run        bool  // the hash is a run tx's (in sent.csv)
	}
	link := make([]int32, len(chain)) // next position in chain with the same hash
	byHash := make(map[string]int32, len(chain))
	var hcs []hashCommits
	for p, i := range chain {
		link[p] = -1
		h := in.BlockTxs[i].Hash
		k, ok := byHash[h]
		if !ok {
			byHash[h] = int32(len(hcs))
			hcs = append(hcs, hashCommits{head: int32(p), tail: int32(p), left: 1})
			continue
		}
		e := &hcs[k]
		link[e.tail], e.tail = int32(p), int32(p)
		e.left++
	}

	// Sent rows take their hash's commits in order: accepted rows first (by
	// seq), then send_error rows (the write may have reached the node before
	// the connection failed). Commits left over are duplicates. CheckTx
	// rejections stay rejected whatever the chain holds.
	rows := make([]TxRow, len(in.Sent))
	order := make([]int32, len(in.Sent))
	rank := make([]int8, len(in.Sent))
	ent := make([]int32, len(in.Sent)) // the row's hashCommits, -1: none
	for i := range in.Sent {
		s := &in.Sent[i]
		rows[i] = TxRow{Sent: *s, Tx: rundir.Tx{Seq: s.Seq, Node: s.Node, Conn: s.Conn, Hash: s.Hash,
			IntendedNs: s.Intended, SentNs: s.SentAt}}
		order[i] = int32(i)
		switch s.Result {
		case rundir.ResultOK:
			rank[i] = 0
		case rundir.ResultSendError:
			rank[i] = 1
		case rundir.ResultRejected:
			rank[i] = 2
		}
		ent[i] = -1
		if k, ok := byHash[s.Hash]; ok {
			ent[i] = k
			hcs[k].run = true
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if rank[a] != rank[b] {
			return int(rank[a]) - int(rank[b])
		}
		return cmp.Compare(rows[a].Sent.Seq, rows[b].Sent.Seq)
	})
	acc := &res.Accounting
	for _, i := range order {
		r := &rows[i]
		switch r.Sent.Result {
		case rundir.ResultRejected:
			r.State, r.Code, r.Log = rundir.StateRejected, r.Sent.Code, r.Sent.Log
			continue
		case rundir.ResultSendError:
			r.State, r.Log = rundir.StateSendError, r.Sent.Log
		default:
			r.State = noBlock
		}
		if ent[i] < 0 || hcs[ent[i]].left == 0 {
			continue
		}
		e := &hcs[ent[i]]
		t := &in.BlockTxs[chain[e.head]]
		e.head, e.left = link[e.head], e.left-1
		b, ok := blockAt.get(t.Height)
		if !ok {
			return nil, nil, fmt.Errorf("analyze: block_txs.csv has height %d that blocks.csv lacks", t.Height)
		}
		r.Height, r.BlockTimeNs = t.Height, b.TimeNs
		if t.Code != 0 {
			// Executed with a non-zero code: in a block, but not committed state.
			if r.State == noBlock {
				r.State, r.Code, r.Log = rundir.StateRejected, int64(t.Code), t.Log
			}
			continue
		}
		if r.State == noBlock {
			r.State = rundir.StateCommitted
		} else {
			acc.SendErrorsCommitted++
		}
		r.LatencyMs, r.HasLatency = ms(b.TimeNs-r.SentNs), true
		if next, ok := blockAt.get(t.Height + 1); ok {
			r.LatencyNextMs, r.HasNext = ms(next.TimeNs-r.SentNs), true
		}
	}
	// Extra commits of a run tx are duplicates; txs of others (warm-up,
	// other clients) are not ours to count.
	for _, e := range hcs {
		if e.run {
			acc.Duplicates += int(e.left)
		}
	}

	// Accounting.
	var latH, latNext []float64
	firstH, lastH := int64(math.MaxInt64), int64(0)
	for _, r := range rows {
		switch r.Sent.Result {
		case rundir.ResultSendError:
			acc.SendErrors++
			continue
		default:
			acc.Sent++
		}
		switch r.State {
		case rundir.StateCommitted:
			acc.Committed++
			firstH, lastH = min(firstH, r.Height), max(lastH, r.Height)
			latH = append(latH, r.LatencyMs)
			if r.HasNext {
				latNext = append(latNext, r.LatencyNextMs)
			}
		case rundir.StateRejected:
			acc.Rejected++
		case rundir.StateLost:
			acc.Lost++
		case rundir.StatePending:
			acc.Pending++
		}
	}
	if !acc.Holds() {
		return nil, nil, fmt.Errorf("analyze: accounting broken: sent %d != committed %d + rejected %d + lost %d + pending %d",
			acc.Sent, acc.Committed, acc.Rejected, acc.Lost, acc.Pending)
	}
	if acc.Pending > 0 {
		dr := in.Harvest.Drain
		invalid("%d txs pending: the interrupted run stopped waiting for the mempools after %.1f s (bound %.1f s, grace %.1f s); they may still commit",
			acc.Pending, dr.WaitedSec, dr.BoundSec, dr.GraceSec)
	}
	res.TotalSubmitted, res.TotalIncluded = acc.Sent, acc.Committed

	// Latency: the headline block's distribution and the other one.
	head, other, headName := latH, latNext, "H"
	if res.LatencyBlock == "H+1" {
		head, other, headName = latNext, latH, "H+1"
	}
	res.Latency, res.LatencyOther = analyze.Summarize(head), analyze.Summarize(other)
	for _, v := range head {
		if v < 0 {
			res.NegativeLatencies++
		}
	}
	res.AvgLatencyMs, res.P50LatencyMs, res.P95LatencyMs = res.Latency.Avg, res.Latency.P50, res.Latency.P95
	res.P99LatencyMs, res.MaxLatencyMs = res.Latency.P99, res.Latency.Max
	if missing := acc.Committed - len(head); missing > 0 {
		invalid("latency (%s) unknown for %d committed txs: block H+1 of their block was not harvested", headName, missing)
	}

	// Throughput from block timestamps only (throughput, below).
	switch {
	case sentCount(in.Sent) == 0:
		invalid("sent.csv has no sent txs")
	case len(in.Blocks) == 0:
		invalid("no blocks harvested: nothing can be measured")
	case acc.Committed == 0:
		invalid("no sent tx was committed")
	default:
		var ok bool
		res.DurationSec, res.TxPerSecond, ok = throughput(rows, blockAt, firstH, lastH, acc.Committed)
		if !ok {
			invalid("all committed txs are in one block (height %d): TPS needs two block timestamps", firstH)
		}
	}

	res.BlockStats = blockStats(in.Blocks, inRange)
	res.Load = loadStats(rows, in.LoadSummary, func(format string, a ...any) {
		why := fmt.Sprintf(format, a...)
		res.GeneratorInvalid = append(res.GeneratorInvalid, why)
		invalid("%s", why)
	})
	if ls := in.LoadSummary; ls != nil && ls.Attempted < ls.Expected {
		invalid("load stopped early (interrupted?): %d of %d txs attempted", ls.Attempted, ls.Expected)
	}
	res.Nodes, res.PeakMempool = nodeResults(in, rows)
	testbed(in, res)
	res.Valid = len(res.Invalid) == 0
	res.Accounts = accountsResults(in.Plan, rows) // accounts.go; nil for other workloads
	return res, rows, nil
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// throughput is the committed rate from block timestamps: block H's txs
// arrived during one block interval, (time(H−1), time(H)], so N blocks
// hold the txs of N intervals. The first and last blocks holding a
// committed run tx (firstH, lastH) are partial: the load began and ended
// inside their intervals. So the rate counts the committed run txs of the
// blocks strictly between them over the intervals those blocks fill,
// time(lastH−1) − time(firstH): N−2 blocks over N−2 intervals, exact for a
// constant rate whatever the block times and the load's phase against
// them. The former committed / (time(lastH) − time(firstH)) counted N
// blocks over N−1 intervals; the two partial blocks make up about one
// interval's txs on average, so it erred by up to ± one block interval
// over the span (201.6 tx/s for 12000 txs at 200 tx/s with 0.96 s blocks,
// TestThroughputOfferedRate), and the span from the block before the
// first one (N over N) counts the unfilled parts of both edge intervals,
// −1 interval on average (196.7 tx/s at 1 s blocks). With two blocks
// holding run txs (or none of them between the two) there is no full block
// to count: all committed txs over the span from the first to the last
// (the two partial blocks stand for about one full one). ok is false when one block holds them all. duration is in
// seconds, rate in tx/s rounded to 3 decimals.
func throughput(rows []TxRow, blockAt blockIndex, firstH, lastH int64, committed int) (duration, rate float64, ok bool) {
	if lastH <= firstH {
		return 0, 0, false
	}
	first, _ := blockAt.get(firstH)
	last, _ := blockAt.get(lastH)
	n, from, to := committed, first.TimeNs, last.TimeNs
	if before, ok := blockAt.get(lastH - 1); ok && lastH-firstH >= 2 {
		inner := 0
		for i := range rows {
			if r := &rows[i]; r.State == rundir.StateCommitted && r.Sent.Result != rundir.ResultSendError && r.Height > firstH && r.Height < lastH {
				inner++
			}
		}
		if inner > 0 {
			n, to = inner, before.TimeNs
		}
	}
	if to <= from {
		return 0, 0, false
	}
	duration = float64(to-from) / 1e9
	return duration, analyze.Round3(float64(n) / duration), true
}

// testbed runs the testbed check over the load window (first intended
// send to last send) and adds its reasons to Invalid, prefixed
// "testbed-bound: " (the generator's are there already).
func testbed(in *Input, res *rundir.Results) {
	from, to := int64(math.MaxInt64), int64(0)
	for i := range in.Sent {
		s := &in.Sent[i]
		if s.Intended > 0 {
			from = min(from, s.Intended)
		}
		to = max(to, s.SentAt, s.Intended)
	}
	if from > to {
		from, to = 0, 0
	}
	tb, why := analyze.CheckTestbed(analyze.TestbedInput{FromNs: from, ToNs: to, Host: in.Host, Proc: in.Proc,
		Sent: res.Accounting.Sent, Committed: res.Accounting.Committed, Blocks: len(in.Blocks), Unit: "txs",
		Generator: res.GeneratorInvalid})
	res.Testbed, res.TestbedBound = tb, why
	for _, w := range why[len(res.GeneratorInvalid):] {
		res.Invalid = append(res.Invalid, "testbed-bound: "+w)
	}
}

func sentCount(sent []rundir.Sent) int {
	n := 0
	for _, s := range sent {
		if s.Result != rundir.ResultSendError {
			n++
		}
	}
	return n
}

func blockStats(blocks []rundir.Block, inRange func(int64) bool) rundir.BlockStats {
	var bs rundir.BlockStats
	var txs, size float64
	var first, last rundir.Block
	for _, b := range blocks {
		if !inRange(b.Height) {
			continue
		}
		if bs.Blocks == 0 || b.Height < first.Height {
			first = b
		}
		if bs.Blocks == 0 || b.Height > last.Height {
			last = b
		}
		bs.Blocks++
		txs += float64(b.NumTxs)
		size += float64(b.SizeBytes)
		bs.MaxTxs = max(bs.MaxTxs, b.NumTxs)
	}
	if bs.Blocks == 0 {
		return bs
	}
	bs.FirstHeight, bs.LastHeight = first.Height, last.Height
	bs.AvgTxs = analyze.Round3(txs / float64(bs.Blocks))
	bs.AvgSizeBytes = analyze.Round3(size / float64(bs.Blocks))
	if bs.Blocks > 1 {
		bs.AvgBlockSec = analyze.Round3(float64(last.TimeNs-first.TimeNs) / 1e9 / float64(last.Height-first.Height))
	}
	return bs
}

// loadStats certifies the generator per connection from sent.csv, with the
// generator's own definition of the limits (load.ConnMeter): send errors
// count as attempts (the generator did try them). The node's backpressure
// is the generator's own count (load.json BlockedS; sent.csv cannot show
// it), named in a lag's reason.
func loadStats(rows []TxRow, ls *rundir.LoadSummary, invalid func(string, ...any)) []rundir.ConnStats {
	type key struct {
		node string
		conn int
	}
	by := map[key]*load.ConnMeter{}
	for i := range rows {
		k := key{rows[i].Node, rows[i].Conn}
		if by[k] == nil {
			by[k] = &load.ConnMeter{}
		}
		by[k].Add(&rows[i].Sent)
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].node != keys[j].node {
			return keys[i].node < keys[j].node
		}
		return keys[i].conn < keys[j].conn
	})
	blocked := map[key]float64{}
	if ls != nil {
		for _, c := range ls.Conns {
			blocked[key{c.Node, c.Conn}] = c.BlockedS
		}
	}
	var out []rundir.ConnStats
	for _, k := range keys {
		lc, why := by[k].Summary(k.node, k.conn, 0)
		if b := blocked[k]; why != "" && b > 0 {
			why += load.BlockedNote(b)
		}
		if why != "" {
			invalid("load: %s", why)
		}
		out = append(out, rundir.ConnStats{Node: k.node, Conn: k.conn, Sent: lc.Attempted - lc.Errors, Errors: lc.Errors,
			TargetRate: analyze.Round3(lc.TargetRate), Achieved: analyze.Round3(lc.Achieved), LagP99Ms: analyze.Round3(lc.LagP99Ms), LagMaxMs: analyze.Round3(lc.LagMaxMs),
			BlockedS: analyze.Round3(blocked[k])})
	}
	return out
}

// nodeResults lists every plan node (or every node seen, without a plan)
// with what it was sent, its peak mempool and whether it died.
func nodeResults(in *Input, rows []TxRow) ([]rundir.NodeResult, int) {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if in.Plan != nil {
		for _, n := range in.Plan.Nodes {
			add(n.Name)
		}
	}
	for _, r := range rows {
		add(r.Node)
	}
	for _, m := range in.Mempool {
		add(m.Node)
	}
	sent, peak, exited := map[string]int{}, map[string]int{}, map[string]string{}
	for _, r := range rows {
		if r.Sent.Result != rundir.ResultSendError {
			sent[r.Node]++
		}
	}
	total := 0
	for _, m := range in.Mempool {
		peak[m.Node] = max(peak[m.Node], m.Size)
		total = max(total, m.Size)
	}
	for _, e := range in.Events {
		if e.Kind == rundir.EventNodeExited {
			exited[e.Node] = e.Detail
		}
	}
	out := make([]rundir.NodeResult, 0, len(names))
	for _, n := range names {
		d, ok := exited[n]
		out = append(out, rundir.NodeResult{Name: n, Sent: sent[n], PeakMempool: peak[n], Exited: ok, Detail: d})
	}
	return out, total
}

// config is results.json's config: the load as the plan resolved it, plus
// the testnet's shape.
func config(t *plan.Testnet) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	cfg := map[string]any{}
	data, _ := json.Marshal(t.Load)
	_ = json.Unmarshal(data, &cfg)
	cfg["testnet"] = t.Name
	cfg["nodes"] = len(t.Nodes)
	cfg["validators"] = len(t.Validators())
	var rel []string
	for _, r := range t.Releases() {
		rel = append(rel, r.String())
	}
	cfg["releases"] = rel
	return cfg
}

// WriteTxs writes txs.csv atomically: one row per sent.csv row, in seq
// order.
func WriteTxs(path string, rows []TxRow) error {
	out := make([]rundir.Tx, len(rows))
	for i, r := range rows {
		out[i] = r.Tx
	}
	slices.SortStableFunc(out, func(a, b rundir.Tx) int { return cmp.Compare(a.Seq, b.Seq) })
	return rundir.TxsCSV.WriteFile(path, out)
}

// blockIndex finds blocks by height: a slice indexed by height when the
// heights are dense (they are: a run's range plus H+1), a map otherwise.
// A height listed twice keeps its last row.
type blockIndex struct {
	base  int64
	dense []rundir.Block
	ok    []bool
	m     map[int64]rundir.Block
}

func newBlockIndex(blocks []rundir.Block) blockIndex {
	if len(blocks) == 0 {
		return blockIndex{}
	}
	lo, hi := blocks[0].Height, blocks[0].Height
	for _, b := range blocks {
		lo, hi = min(lo, b.Height), max(hi, b.Height)
	}
	if hi-lo >= int64(4*len(blocks)+64) {
		m := make(map[int64]rundir.Block, len(blocks))
		for _, b := range blocks {
			m[b.Height] = b
		}
		return blockIndex{m: m}
	}
	x := blockIndex{base: lo, dense: make([]rundir.Block, hi-lo+1), ok: make([]bool, hi-lo+1)}
	for _, b := range blocks {
		x.dense[b.Height-lo], x.ok[b.Height-lo] = b, true
	}
	return x
}

func (x blockIndex) get(h int64) (rundir.Block, bool) {
	if x.m != nil {
		b, ok := x.m[h]
		return b, ok
	}
	i := h - x.base
	if i < 0 || i >= int64(len(x.dense)) || !x.ok[i] {
		return rundir.Block{}, false
	}
	return x.dense[i], true
}
