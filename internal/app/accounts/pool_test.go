package accounts

import (
	"bytes"
	"fmt"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
)

func newPoolApp(t *testing.T) *App {
	t.Helper()
	return openApp(t, "pebbledb", Options{ABCIMempool: true})
}

// TestABCIMempool: the app-side mempool of cometbft v0.40 ([mempool] type
// = "app"). Out-of-order txs from the RPC (CheckTx) and a peer (InsertTx)
// are held; ReapTxs hands each out once; the proposal is built from the
// pool in sequence order (the node's own list is empty); Commit prunes
// what the block used and keeps the gap's txs.
func TestABCIMempool(t *testing.T) {
	a := newPoolApp(t)
	k, j := KeyFor(5, "pool", 0), KeyFor(5, "pool", 1)
	rpc := [][]byte{transfer(k, 2), transfer(k, 0)}
	peer := [][]byte{transfer(k, 1), transfer(j, 1)} // j's 0 never comes: a gap
	for _, tx := range rpc {
		if c := check(t, a, tx, false); c != CodeOK {
			t.Fatalf("CheckTx: code %d", c)
		}
	}
	for _, tx := range peer {
		if c, err := a.InsertTx(tx); err != nil || c != CodeOK {
			t.Fatalf("InsertTx: code %d, %v", c, err)
		}
	}
	for _, tc := range []struct {
		name string
		tx   []byte
		want uint32
	}{
		{"a pending sequence again", transfer(k, 1), CodeOK}, // the same bytes: already held
		{"another tx at a pending sequence", (&Tx{Sequence: 1, Op: OpWrite, Keys: 1}).Sign(k), CodeDuplicateSq},
		{"too far ahead", transfer(k, MaxAhead), CodeFutureSeq},
		{"forged", forge(transfer(k, 3)), CodeBadSig},
		{"malformed", []byte("no-equals-sign"), CodeMalformed},
	} {
		if c, err := a.InsertTx(tc.tx); err != nil || c != tc.want {
			t.Errorf("%s: code %d (%v), want %d", tc.name, c, err, tc.want)
		}
	}
	if a.Pending() != 4 {
		t.Fatalf("pending %d, want 4", a.Pending())
	}
	reaped, err := a.ReapTxs(0)
	if err != nil || len(reaped) != 4 || !bytes.Equal(reaped[0], rpc[0]) || !bytes.Equal(reaped[3], peer[1]) {
		t.Fatalf("reap: %d txs, %v (want the 4 held, in arrival order)", len(reaped), err)
	}
	if again, _ := a.ReapTxs(0); len(again) != 0 {
		t.Errorf("a second reap handed out %d txs again", len(again))
	}
	got, codes := block(t, a, 1, nil)
	want := [][]byte{transfer(k, 0), transfer(k, 1), transfer(k, 2)}
	if len(got) != 3 {
		t.Fatalf("proposal of %d txs, want k's 3 (j's waits for its sequence 0)", len(got))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) || codes[i] != CodeOK {
			t.Errorf("proposal tx %d: not k's sequence %d in order, or code %d", i, i, codes[i])
		}
	}
	if a.Pending() != 1 {
		t.Errorf("after commit %d pending, want j's 1", a.Pending())
	}
	if c, _ := a.InsertTx(transfer(k, 1)); c != CodeUsedSeq {
		t.Errorf("a used sequence: code %d, want %d", c, CodeUsedSeq)
	}
	// j's missing tx arrives: both go in the next block.
	if c, _ := a.InsertTx(transfer(j, 0)); c != CodeOK {
		t.Fatalf("j's 0: code %d", c)
	}
	if got, _ := block(t, a, 2, nil); len(got) != 2 || a.Pending() != 0 {
		t.Errorf("second block %d txs, %d pending; want 2 and 0", len(got), a.Pending())
	}
	// ReapTxs' max_bytes: a partial reap leaves the rest for the next.
	var kv [][]byte
	for i := range 3 {
		kv = append(kv, []byte(fmt.Sprintf("key%d=value", i)))
		if c, _ := a.InsertTx(kv[i]); c != CodeOK {
			t.Fatalf("kv tx: code %d", c)
		}
	}
	if r, _ := a.ReapTxs(uint64(len(kv[0]) + len(kv[1]))); len(r) != 2 {
		t.Errorf("reap within %d bytes: %d txs, want 2", len(kv[0])+len(kv[1]), len(r))
	}
	if r, _ := a.ReapTxs(0); len(r) != 1 || !bytes.Equal(r[0], kv[2]) {
		t.Errorf("the rest: %d txs", len(r))
	}
	if got, _ := block(t, a, 3, nil); len(got) != 3 || a.Pending() != 0 {
		t.Errorf("kv block: %d txs, %d pending", len(got), a.Pending())
	}
}

// forge flips a bit of tx's signature.
func forge(tx []byte) []byte {
	tx[len(tx)-1] ^= 1
	return tx
}

func TestPoolFull(t *testing.T) {
	a := newPoolApp(t)
	for i := range PoolSize {
		if c, _ := a.InsertTx([]byte(fmt.Sprintf("k%d=v", i))); c != CodeOK {
			t.Fatalf("tx %d: code %d", i, c)
		}
	}
	if c, _ := a.InsertTx([]byte("one=more")); c != CodePoolFull || c < 32000 {
		t.Errorf("a full pool: code %d, want %d (retryable: >= 32000 in cometbft v0.40)", c, CodePoolFull)
	}
	// A proposal bounded by MaxTxBytes takes what fits; Commit frees it.
	pp, err := a.PrepareProposal(ctx, &abci.PrepareProposalRequest{MaxTxBytes: 1000, Height: 1})
	if err != nil || len(pp.Txs) == 0 || len(pp.Txs) >= PoolSize {
		t.Fatalf("bounded proposal: %d txs, %v", len(pp.Txs), err)
	}
	if _, err := a.FinalizeBlock(ctx, &abci.FinalizeBlockRequest{Txs: pp.Txs, Height: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, &abci.CommitRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := a.Pending(); got != PoolSize-len(pp.Txs) {
		t.Errorf("after commit %d pending, want %d", got, PoolSize-len(pp.Txs))
	}
}

// TestInsertReapWithoutPool: the v0.40 methods on an app without the
// pool are an error (the node would halt: a misconfiguration, loud).
func TestInsertReapWithoutPool(t *testing.T) {
	a := newApp(t, "pebbledb", true)
	k := KeyFor(6, "x", 0)
	if _, err := a.InsertTx(transfer(k, 0)); err == nil {
		t.Error("InsertTx without a pool")
	}
	if _, err := a.ReapTxs(0); err == nil {
		t.Error("ReapTxs without a pool")
	}
}
