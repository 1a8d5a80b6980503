package accounts

import (
	"crypto/sha256"
	"fmt"
)

// The app-side mempool of cometbft v0.40's [mempool] type = "app"
// (Options.ABCIMempool): CometBFT keeps no txs. CheckTx (the RPC's) and
// InsertTx (a peer's) add a tx here after the queue's checks; ReapTxs hands
// each added tx once to CometBFT, which broadcasts it to its peers;
// PrepareProposal builds the block from here, each sender's contiguous run
// in sequence order (the nonce queue); Commit drops what the chain used.
// Read from v0.40.0's mempool/app_mempool.go and test/e2e/app.

// PoolSize bounds the pool, as CometBFT's mempool.size (5000) bounds its
// own: a full pool answers CodePoolFull.
const PoolSize = 5000

type pooled struct {
	tx   []byte
	hash [32]byte
	acct bool // an accounts tx (else a key=value tx)
	addr [AddrLen]byte
	seq  uint64
}

// txPool holds the pending txs in arrival order.
type txPool struct {
	order    []*pooled
	byHash   map[[32]byte]*pooled
	bySeq    map[[AddrLen]byte]map[uint64]*pooled
	unreaped []*pooled // added, not yet handed to ReapTxs
}

func newTxPool() *txPool {
	return &txPool{byHash: map[[32]byte]*pooled{}, bySeq: map[[AddrLen]byte]map[uint64]*pooled{}}
}

func (p *txPool) add(t *pooled) {
	p.order = append(p.order, t)
	p.byHash[t.hash] = t
	if t.acct {
		m := p.bySeq[t.addr]
		if m == nil {
			m = map[uint64]*pooled{}
			p.bySeq[t.addr] = m
		}
		m[t.seq] = t
	}
	p.unreaped = append(p.unreaped, t)
}

// insert checks b as the queue's CheckTx does (signature, a sequence not
// used and not too far ahead, not pending already) and adds it. A tx the
// pool holds already is OK (the node's seen cache usually stops it first).
func (a *App) insert(b []byte) (uint32, string, error) {
	h := sha256.Sum256(b)
	if _, ok := a.pool.byHash[h]; ok {
		return CodeOK, "", nil
	}
	if len(a.pool.order) >= PoolSize {
		return CodePoolFull, fmt.Sprintf("the app-side mempool holds %d txs", PoolSize), nil
	}
	t := &pooled{tx: b, hash: h}
	if !IsAccountsTx(b) {
		if _, _, ok := parseKV(b); !ok {
			return CodeMalformed, "neither an accounts tx nor key=value", nil
		}
		a.pool.add(t)
		return CodeOK, "", nil
	}
	tx, code, log := verified(b)
	if code != CodeOK {
		return code, log, nil
	}
	t.acct, t.addr, t.seq = true, Address(tx.PubKey), tx.Sequence
	acc, err := a.committed(t.addr)
	if err != nil {
		return 0, "", err
	}
	switch {
	case t.seq < acc.Seq:
		return CodeUsedSeq, fmt.Sprintf("sequence %d already used: account is at %d", t.seq, acc.Seq), nil
	case t.seq >= acc.Seq+MaxAhead:
		return CodeFutureSeq, fmt.Sprintf("sequence %d is %d or more ahead of the account (%d)", t.seq, MaxAhead, acc.Seq), nil
	case a.pool.bySeq[t.addr][t.seq] != nil:
		return CodeDuplicateSq, fmt.Sprintf("sequence %d is already pending", t.seq), nil
	}
	a.pool.add(t)
	return CodeOK, "", nil
}

// reap hands out the txs added since the last reap, up to maxBytes of
// them (0: all), in arrival order: each is broadcast once by the node
// that took it first, which is how CometBFT's flood mempool gossips too.
func (p *txPool) reap(maxBytes uint64) [][]byte {
	var out [][]byte
	size := uint64(0)
	n := 0
	for _, t := range p.unreaped {
		if maxBytes > 0 && size+uint64(len(t.tx)) > maxBytes && n > 0 {
			break
		}
		size += uint64(len(t.tx))
		out = append(out, t.tx)
		n++
	}
	p.unreaped = p.unreaped[n:]
	if len(p.unreaped) == 0 {
		p.unreaped = nil // let the backing array go
	}
	return out
}

// txs is every pending tx in arrival order, for PrepareProposal.
func (p *txPool) txs() [][]byte {
	out := make([][]byte, len(p.order))
	for i, t := range p.order {
		out[i] = t.tx
	}
	return out
}

// prune drops what the committed block used: its key=value txs (by
// hash) and every tx whose sequence the account has passed.
func (a *App) prune(included map[[32]byte]bool) error {
	p := a.pool
	seqs := map[[AddrLen]byte]uint64{}
	keep := p.order[:0]
	var drop []*pooled
	for _, t := range p.order {
		used := included[t.hash]
		if t.acct && !used {
			next, ok := seqs[t.addr]
			if !ok {
				acc, err := a.committed(t.addr)
				if err != nil {
					return err
				}
				next = acc.Seq
				seqs[t.addr] = next
			}
			used = t.seq < next
		}
		if used {
			drop = append(drop, t)
			continue
		}
		keep = append(keep, t)
	}
	clear(p.order[len(keep):])
	p.order = keep
	for _, t := range drop {
		delete(p.byHash, t.hash)
		if t.acct {
			delete(p.bySeq[t.addr], t.seq)
			if len(p.bySeq[t.addr]) == 0 {
				delete(p.bySeq, t.addr)
			}
		}
	}
	if len(drop) > 0 && len(p.unreaped) > 0 {
		live := p.unreaped[:0]
		for _, t := range p.unreaped {
			if _, ok := p.byHash[t.hash]; ok {
				live = append(live, t)
			}
		}
		p.unreaped = live
	}
	return nil
}

// Pending is how many txs the app-side mempool holds (ABCIMempool).
func (a *App) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pool == nil {
		return 0
	}
	return len(a.pool.order)
}
