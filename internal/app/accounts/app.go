package accounts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	dbm "github.com/cometbft/cometbft-db"
	abci "github.com/cometbft/cometbft/abci/types"
)

// InitialBalance is what an account holds before its first tx: accounts
// need no genesis, any key is funded (a faucet built into the state).
const InitialBalance uint64 = 1 << 40

// MaxAhead is how far past an account's committed sequence the app-side
// queue holds txs; further ones get CodeFutureSeq, so one sender cannot
// fill the mempool with txs that can never run.
const MaxAhead = 256

// Options choose the app's variant.
type Options struct {
	// QueueMempool holds future sequences in the mempool (CheckTx accepts
	// them) and has PrepareProposal include each sender's contiguous run;
	// false rejects them in CheckTx, like a Cosmos SDK ante handler.
	QueueMempool bool
	// ABCIMempool keeps the mempool in the app, for cometbft v0.40's
	// [mempool] type = "app" (pool.go): CheckTx and InsertTx add txs,
	// ReapTxs hands them to the node to broadcast, PrepareProposal builds
	// the block from the pool with the queue's order.
	ABCIMempool bool
}

type account struct {
	Seq     uint64 // next sequence the account must use
	Balance uint64
}

// App is the accounts application. One mutex serializes the ABCI
// connections (mempool, consensus, query): CheckTx is cheap next to a
// block, and the state needs no finer locking.
type App struct {
	abci.BaseApplication
	opts Options

	mu sync.Mutex
	db dbm.DB
	// Committed state summary.
	height  int64
	appHash []byte
	// Block being finalized: its account updates and writes, flushed by Commit.
	blockAccts  map[[AddrLen]byte]account
	blockWrites map[string][]byte
	blockHeight int64
	blockHash   []byte
	// Check state, rebuilt after every commit by the mempool's recheck:
	// baseline: each sender's next sequence; queue: each sender's pending
	// sequences.
	checkNext map[[AddrLen]byte]uint64
	held      map[[AddrLen]byte]map[uint64]bool
	// pool is the app-side mempool (ABCIMempool), nil otherwise;
	// blockIncluded the finalized block's tx hashes, pruned at Commit.
	pool          *txPool
	blockIncluded map[[32]byte]bool
}

var (
	keyHeight  = []byte("m/height")
	keyAppHash = []byte("m/apphash")
)

func accountKey(a [AddrLen]byte) []byte { return append([]byte("a/"), a[:]...) }

// New opens the app on db (which it owns: Close closes it).
func New(db dbm.DB, opts Options) (*App, error) {
	a := &App{db: db, opts: opts}
	if opts.ABCIMempool {
		a.pool = newTxPool()
	}
	h, err := db.Get(keyHeight)
	if err != nil {
		return nil, fmt.Errorf("accounts: read height: %w", err)
	}
	if len(h) == 8 {
		a.height = int64(binary.BigEndian.Uint64(h))
	}
	if a.appHash, err = db.Get(keyAppHash); err != nil {
		return nil, fmt.Errorf("accounts: read app hash: %w", err)
	}
	a.resetCheck()
	return a, nil
}

// Close closes the store.
func (a *App) Close() error { return a.db.Close() }

func (a *App) resetCheck() {
	a.checkNext = map[[AddrLen]byte]uint64{}
	a.held = map[[AddrLen]byte]map[uint64]bool{}
}

// committed reads an account as of the last commit.
func (a *App) committed(addr [AddrLen]byte) (account, error) {
	v, err := a.db.Get(accountKey(addr))
	if err != nil {
		return account{}, fmt.Errorf("accounts: read account: %w", err)
	}
	if len(v) != 16 {
		return account{Balance: InitialBalance}, nil
	}
	return account{Seq: binary.BigEndian.Uint64(v), Balance: binary.BigEndian.Uint64(v[8:])}, nil
}

// Info tells CometBFT where the app is, so a restarted node replays only
// the blocks the store lacks.
func (a *App) Info(context.Context, *abci.InfoRequest) (*abci.InfoResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &abci.InfoResponse{Data: "benchnet-accounts", Version: "1", AppVersion: 1, LastBlockHeight: a.height, LastBlockAppHash: a.appHash}, nil
}

// CheckTx admits a tx to the mempool (see Options for the two rules on
// future sequences). A recheck (after every commit) skips the signature,
// as the Cosmos SDK does, and evicts txs whose sequence a block used.
func (a *App) CheckTx(_ context.Context, req *abci.CheckTxRequest) (*abci.CheckTxResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	check := a.check
	if a.pool != nil {
		// An app-side mempool's node calls CheckTx for the RPC's txs only
		// (never a recheck): it adds them to the pool.
		check = func(b []byte, _ bool) (uint32, string, error) { return a.insert(b) }
	}
	code, log, err := check(req.Tx, req.Type == abci.CHECK_TX_TYPE_RECHECK)
	if err != nil {
		return nil, err
	}
	return &abci.CheckTxResponse{Code: code, Log: log}, nil
}

// InsertTx is cometbft v0.40's app-mempool method (a tx a peer sent):
// the pool takes it as CheckTx does. Its request is not in v1.0.1's ABCI
// types, so the socket server (socket.go) decodes it.
func (a *App) InsertTx(b []byte) (uint32, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pool == nil {
		return 0, errors.New("accounts: InsertTx without an app-side mempool (start the app with --abci-mempool)")
	}
	code, _, err := a.insert(b)
	return code, err
}

// ReapTxs is cometbft v0.40's app-mempool method: the txs added since the
// last call, up to maxBytes (0: all), for the node to broadcast.
func (a *App) ReapTxs(maxBytes uint64) ([][]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pool == nil {
		return nil, errors.New("accounts: ReapTxs without an app-side mempool (start the app with --abci-mempool)")
	}
	return a.pool.reap(maxBytes), nil
}

func (a *App) check(b []byte, recheck bool) (uint32, string, error) {
	if !IsAccountsTx(b) {
		if _, _, ok := parseKV(b); !ok {
			return CodeMalformed, "neither an accounts tx nor key=value", nil
		}
		return CodeOK, "", nil
	}
	tx, err := Decode(b)
	if err != nil {
		return CodeMalformed, err.Error(), nil
	}
	if !recheck && !tx.Verify() {
		return CodeBadSig, "signature does not verify", nil
	}
	addr := Address(tx.PubKey)
	acc, err := a.committed(addr)
	if err != nil {
		return 0, "", err
	}
	if tx.Sequence < acc.Seq {
		return CodeUsedSeq, fmt.Sprintf("sequence %d already used: account is at %d", tx.Sequence, acc.Seq), nil
	}
	if a.opts.QueueMempool {
		if tx.Sequence >= acc.Seq+MaxAhead {
			return CodeFutureSeq, fmt.Sprintf("sequence %d is %d or more ahead of the account (%d)", tx.Sequence, MaxAhead, acc.Seq), nil
		}
		h := a.held[addr]
		if h == nil {
			h = map[uint64]bool{}
			a.held[addr] = h
		}
		if h[tx.Sequence] {
			return CodeDuplicateSq, fmt.Sprintf("sequence %d is already pending", tx.Sequence), nil
		}
		h[tx.Sequence] = true
		return CodeOK, "", nil
	}
	next, ok := a.checkNext[addr]
	if !ok {
		next = acc.Seq
	}
	switch {
	case tx.Sequence < next:
		return CodeUsedSeq, fmt.Sprintf("sequence %d already used: expected %d", tx.Sequence, next), nil
	case tx.Sequence > next:
		return CodeFutureSeq, fmt.Sprintf("sequence %d is ahead: expected %d", tx.Sequence, next), nil
	}
	a.checkNext[addr] = next + 1
	return CodeOK, "", nil
}

// txOverhead bounds the protobuf framing of one tx in a block's data
// (field tag and length varint), so proposals stay under MaxTxBytes.
const txOverhead = 8

// PrepareProposal: the baseline keeps the mempool's order; the queue puts
// each sender's txs in sequence order and includes only the run that
// continues from the account's committed sequence (gap txs wait).
func (a *App) PrepareProposal(_ context.Context, req *abci.PrepareProposalRequest) (*abci.PrepareProposalResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out [][]byte
	size := int64(0)
	fits := func(tx []byte) bool {
		if size+int64(len(tx))+txOverhead > req.MaxTxBytes {
			return false
		}
		size += int64(len(tx)) + txOverhead
		return true
	}
	txs := req.Txs
	if a.pool != nil {
		txs = a.pool.txs() // the node proposes nothing of its own
	}
	if !a.opts.QueueMempool && a.pool == nil {
		for _, tx := range txs {
			if !fits(tx) {
				break
			}
			out = append(out, tx)
		}
		return &abci.PrepareProposalResponse{Txs: out}, nil
	}
	order, err := a.orderBySender(txs)
	if err != nil {
		return nil, err
	}
	for _, tx := range order {
		if !fits(tx) {
			break // a later tx of a sender whose run was cut would have a gap
		}
		out = append(out, tx)
	}
	return &abci.PrepareProposalResponse{Txs: out}, nil
}

// orderBySender returns the txs a queue-mode proposal may include: non-
// account txs in place, and each sender's contiguous run (sorted by
// sequence, from its committed sequence) at the place of its first tx.
func (a *App) orderBySender(txs [][]byte) ([][]byte, error) {
	type pending struct {
		seq uint64
		tx  []byte
	}
	bySender := map[[AddrLen]byte][]pending{}
	var senders [][AddrLen]byte
	slot := make([]int, len(txs)) // -1: non-account tx; else index into senders
	for i, b := range txs {
		slot[i] = -1
		if !IsAccountsTx(b) {
			continue
		}
		tx, err := Decode(b)
		if err != nil {
			slot[i] = -2 // malformed: FinalizeBlock would only reject it
			continue
		}
		addr := Address(tx.PubKey)
		if _, ok := bySender[addr]; !ok {
			senders = append(senders, addr)
			slot[i] = len(senders) - 1
		} else {
			slot[i] = -3 // not the sender's first
		}
		bySender[addr] = append(bySender[addr], pending{tx.Sequence, b})
	}
	var out [][]byte
	for i, b := range txs {
		switch {
		case slot[i] == -1:
			out = append(out, b)
		case slot[i] >= 0:
			addr := senders[slot[i]]
			acc, err := a.committed(addr)
			if err != nil {
				return nil, err
			}
			ps := bySender[addr]
			slices.SortStableFunc(ps, func(x, y pending) int {
				switch {
				case x.seq < y.seq:
					return -1
				case x.seq > y.seq:
					return 1
				}
				return 0
			})
			next := acc.Seq
			for _, p := range ps {
				if p.seq == next {
					out = append(out, p.tx)
					next++
				} else if p.seq > next {
					break // a gap: the rest waits in the mempool
				}
			}
		}
	}
	return out, nil
}

// ProcessProposal accepts every proposal: FinalizeBlock gives each tx its
// own result, so a proposer's bad order costs codes, not liveness.
func (a *App) ProcessProposal(context.Context, *abci.ProcessProposalRequest) (*abci.ProcessProposalResponse, error) {
	return &abci.ProcessProposalResponse{Status: abci.PROCESS_PROPOSAL_STATUS_ACCEPT}, nil
}

// FinalizeBlock executes the block's txs against a working copy of the
// state, which Commit writes to the store.
func (a *App) FinalizeBlock(_ context.Context, req *abci.FinalizeBlockRequest) (*abci.FinalizeBlockResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.blockAccts = map[[AddrLen]byte]account{}
	a.blockWrites = map[string][]byte{}
	a.blockIncluded = nil
	if a.pool != nil {
		a.blockIncluded = make(map[[32]byte]bool, len(req.Txs))
	}
	h := sha256.New()
	h.Write(a.appHash)
	_ = binary.Write(h, binary.BigEndian, req.Height)
	results := make([]*abci.ExecTxResult, len(req.Txs))
	for i, b := range req.Txs {
		code, log, err := a.deliver(b)
		if err != nil {
			return nil, err
		}
		results[i] = &abci.ExecTxResult{Code: code, Log: log}
		sum := sha256.Sum256(b)
		h.Write(sum[:])
		if a.blockIncluded != nil {
			a.blockIncluded[sum] = true
		}
		_ = binary.Write(h, binary.BigEndian, code)
	}
	a.blockHeight = req.Height
	a.blockHash = h.Sum(nil)
	return &abci.FinalizeBlockResponse{TxResults: results, AppHash: a.blockHash}, nil
}

// working reads an account as the block being finalized sees it.
func (a *App) working(addr [AddrLen]byte) (account, error) {
	if acc, ok := a.blockAccts[addr]; ok {
		return acc, nil
	}
	return a.committed(addr)
}

func (a *App) deliver(b []byte) (uint32, string, error) {
	if !IsAccountsTx(b) {
		k, v, ok := parseKV(b)
		if !ok {
			return CodeMalformed, "neither an accounts tx nor key=value", nil
		}
		a.blockWrites["k/"+string(k)] = v
		return CodeOK, "", nil
	}
	tx, code, log := verified(b)
	if code != CodeOK {
		return code, log, nil
	}
	addr := Address(tx.PubKey)
	acc, err := a.working(addr)
	if err != nil {
		return 0, "", err
	}
	switch {
	case tx.Sequence < acc.Seq:
		return CodeUsedSeq, fmt.Sprintf("sequence %d already used: account is at %d", tx.Sequence, acc.Seq), nil
	case tx.Sequence > acc.Seq:
		return CodeFutureSeq, fmt.Sprintf("sequence %d is ahead: account is at %d", tx.Sequence, acc.Seq), nil
	}
	// The sequence is spent even when the op fails (as in the Cosmos SDK,
	// where the ante handler's increment survives a failing message).
	acc.Seq++
	a.blockAccts[addr] = acc
	switch tx.Op {
	case OpTransfer:
		if acc.Balance < tx.Amount {
			return CodeNoFunds, fmt.Sprintf("balance %d < amount %d", acc.Balance, tx.Amount), nil
		}
		acc.Balance -= tx.Amount
		a.blockAccts[addr] = acc
		to, err := a.working(tx.To)
		if err != nil {
			return 0, "", err
		}
		to.Balance += tx.Amount
		a.blockAccts[tx.To] = to
	case OpWrite:
		val := binary.BigEndian.AppendUint64(nil, tx.Sequence)
		for i := range int(tx.Keys) {
			a.blockWrites["w/"+string(WriteKey(addr, tx.Sequence, i))] = val
		}
	}
	return CodeOK, "", nil
}

// Commit writes the finalized block's state in one synced batch and resets
// the check state (the mempool's recheck rebuilds it).
func (a *App) Commit(context.Context, *abci.CommitRequest) (*abci.CommitResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	batch := a.db.NewBatch()
	defer batch.Close()
	// Sorted, so every node writes the same batch in the same order.
	addrs := make([][AddrLen]byte, 0, len(a.blockAccts))
	for addr := range a.blockAccts {
		addrs = append(addrs, addr)
	}
	slices.SortFunc(addrs, func(x, y [AddrLen]byte) int { return bytes.Compare(x[:], y[:]) })
	for _, addr := range addrs {
		acc := a.blockAccts[addr]
		v := binary.BigEndian.AppendUint64(nil, acc.Seq)
		v = binary.BigEndian.AppendUint64(v, acc.Balance)
		if err := batch.Set(accountKey(addr), v); err != nil {
			return nil, fmt.Errorf("accounts: commit: %w", err)
		}
	}
	keys := make([]string, 0, len(a.blockWrites))
	for k := range a.blockWrites {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := batch.Set([]byte(k), a.blockWrites[k]); err != nil {
			return nil, fmt.Errorf("accounts: commit: %w", err)
		}
	}
	if err := batch.Set(keyHeight, binary.BigEndian.AppendUint64(nil, uint64(a.blockHeight))); err != nil {
		return nil, fmt.Errorf("accounts: commit: %w", err)
	}
	if err := batch.Set(keyAppHash, a.blockHash); err != nil {
		return nil, fmt.Errorf("accounts: commit: %w", err)
	}
	if err := batch.WriteSync(); err != nil {
		return nil, fmt.Errorf("accounts: commit height %d: %w", a.blockHeight, err)
	}
	a.height, a.appHash = a.blockHeight, a.blockHash
	a.blockAccts, a.blockWrites = nil, nil
	a.resetCheck()
	if a.pool != nil {
		if err := a.prune(a.blockIncluded); err != nil {
			return nil, fmt.Errorf("accounts: prune the app-side mempool: %w", err)
		}
		a.blockIncluded = nil
	}
	return &abci.CommitResponse{}, nil
}

// PoolPath is the query path of the app-side mempool's size (8 bytes,
// big-endian): the harness's drain and mempool poller read it where the
// node's num_unconfirmed_txs reads 0 (cometrpc.AppPoolPath).
const PoolPath = "/pool"

// Query answers path "/pool" with the app-side mempool's size, path
// "/account" (data: a 20-byte address) with the
// account's sequence and balance (8 bytes each, big-endian), and any other
// path with the value of the kv key in data.
func (a *App) Query(_ context.Context, req *abci.QueryRequest) (*abci.QueryResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if req.Path == PoolPath {
		if a.pool == nil {
			return &abci.QueryResponse{Code: CodeMalformed, Log: "no app-side mempool (start the app with --abci-mempool)"}, nil
		}
		return &abci.QueryResponse{Key: req.Data, Value: binary.BigEndian.AppendUint64(nil, uint64(len(a.pool.order))), Height: a.height}, nil
	}
	if req.Path == "/account" {
		if len(req.Data) != AddrLen {
			return &abci.QueryResponse{Code: CodeMalformed, Log: "want a 20-byte address"}, nil
		}
		acc, err := a.committed([AddrLen]byte(req.Data))
		if err != nil {
			return nil, err
		}
		v := binary.BigEndian.AppendUint64(nil, acc.Seq)
		return &abci.QueryResponse{Key: req.Data, Value: binary.BigEndian.AppendUint64(v, acc.Balance), Height: a.height}, nil
	}
	v, err := a.db.Get(append([]byte("k/"), req.Data...))
	if err != nil {
		return nil, err
	}
	return &abci.QueryResponse{Key: req.Data, Value: v, Height: a.height}, nil
}

// Account returns an account's committed sequence and balance.
func (a *App) Account(addr [AddrLen]byte) (seq, balance uint64, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	acc, err := a.committed(addr)
	return acc.Seq, acc.Balance, err
}

// parseKV applies kvstore's rule: exactly one '=' (not at either end) and
// no ':'; so the harness's kv txs and warm-up run on this app unchanged.
func parseKV(b []byte) (k, v []byte, ok bool) {
	if bytes.Count(b, []byte("=")) != 1 || bytes.ContainsRune(b, ':') {
		return nil, nil, false
	}
	k, v, _ = bytes.Cut(b, []byte("="))
	if len(k) == 0 || len(v) == 0 {
		return nil, nil, false
	}
	return k, v, true
}

var _ abci.Application = (*App)(nil)
