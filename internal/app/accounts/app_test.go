package accounts

import (
	"context"
	"crypto/ed25519"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
)

var ctx = context.Background()

// newApp opens the app on a real store of each backend in a temp dir.
func newApp(t *testing.T, backend string, queue bool) *App {
	t.Helper()
	return openApp(t, backend, Options{QueueMempool: queue})
}

// openApp opens the app with opts on a real store of backend in a temp dir.
func openApp(t *testing.T, backend string, opts Options) *App {
	t.Helper()
	db, err := OpenDB(t.TempDir(), backend)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func transfer(priv ed25519.PrivateKey, seq uint64) []byte {
	tx := Tx{Sequence: seq, Op: OpTransfer, To: Address(KeyFor(1, "to", 0).Public().(ed25519.PublicKey)), Amount: 1}
	return tx.Sign(priv)
}

func check(t *testing.T, a *App, tx []byte, recheck bool) uint32 {
	t.Helper()
	typ := abci.CHECK_TX_TYPE_CHECK
	if recheck {
		typ = abci.CHECK_TX_TYPE_RECHECK
	}
	r, err := a.CheckTx(ctx, &abci.CheckTxRequest{Tx: tx, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return r.Code
}

// block runs one height: prepare (from the given mempool txs), finalize,
// commit; it returns the proposal and the codes.
func block(t *testing.T, a *App, h int64, mempool [][]byte) ([][]byte, []uint32) {
	t.Helper()
	pp, err := a.PrepareProposal(ctx, &abci.PrepareProposalRequest{Txs: mempool, MaxTxBytes: 1 << 20, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := a.FinalizeBlock(ctx, &abci.FinalizeBlockRequest{Txs: pp.Txs, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, &abci.CommitRequest{}); err != nil {
		t.Fatal(err)
	}
	codes := make([]uint32, len(fb.TxResults))
	for i, r := range fb.TxResults {
		codes[i] = r.Code
	}
	return pp.Txs, codes
}

func TestCheckTx(t *testing.T) {
	k := KeyFor(7, "run", 0)
	other := KeyFor(7, "run", 1)
	badSig := transfer(k, 0)
	badSig[len(badSig)-1] ^= 1
	forged := Tx{Sequence: 0, Op: OpWrite, Keys: 4}
	forgedB := forged.Sign(other)
	copy(forgedB[4:], k.Public().(ed25519.PublicKey)) // claims k's key, other's signature
	for _, tc := range []struct {
		name  string
		queue bool
		txs   [][]byte // sent in order to CheckTx
		want  []uint32
	}{
		{"sequential", false, [][]byte{transfer(k, 0), transfer(k, 1), transfer(k, 2)}, []uint32{0, 0, 0}},
		{"wrong signature", false, [][]byte{badSig, forgedB}, []uint32{CodeBadSig, CodeBadSig}},
		{"replay in mempool", false, [][]byte{transfer(k, 0), transfer(k, 0)}, []uint32{0, CodeUsedSeq}},
		{"future sequence, baseline", false, [][]byte{transfer(k, 2), transfer(k, 0), transfer(k, 1), transfer(k, 3)}, []uint32{CodeFutureSeq, 0, 0, CodeFutureSeq}},
		{"future sequence, queue", true, [][]byte{transfer(k, 2), transfer(k, 0), transfer(k, 1), transfer(k, 3)}, []uint32{0, 0, 0, 0}},
		{"pending duplicate, queue", true, [][]byte{transfer(k, 1), transfer(k, 1)}, []uint32{0, CodeDuplicateSq}},
		{"too far ahead, queue", true, [][]byte{transfer(k, MaxAhead)}, []uint32{CodeFutureSeq}},
		{"not a tx", false, [][]byte{[]byte("no-equals-sign"), []byte("k=v")}, []uint32{CodeMalformed, 0}},
	} {
		for _, backend := range Backends {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				a := newApp(t, backend, tc.queue)
				for i, tx := range tc.txs {
					if got := check(t, a, tx, false); got != tc.want[i] {
						t.Errorf("tx %d: code %d, want %d", i, got, tc.want[i])
					}
				}
			})
		}
	}
}

// After a commit, the recheck evicts a tx whose sequence a block used, and
// keeps (baseline) the one that continues the account.
func TestRecheckEvictsUsedSequence(t *testing.T) {
	for _, queue := range []bool{false, true} {
		a := newApp(t, "goleveldb", queue)
		k := KeyFor(1, "r", 0)
		tx0, tx1 := transfer(k, 0), transfer(k, 1)
		// Another node's block committed seq 0; this mempool still has seq 0
		// (a different tx with the same sequence) and seq 1.
		replay := (&Tx{Sequence: 0, Op: OpWrite, Keys: 1}).Sign(k)
		for _, tx := range [][]byte{tx0, tx1} {
			if c := check(t, a, tx, false); c != 0 {
				t.Fatalf("queue=%v: check: code %d", queue, c)
			}
		}
		if _, codes := block(t, a, 1, [][]byte{tx0}); codes[0] != 0 {
			t.Fatalf("queue=%v: block: code %d", queue, codes[0])
		}
		if c := check(t, a, tx1, true); c != 0 {
			t.Errorf("queue=%v: recheck of seq 1: code %d, want 0", queue, c)
		}
		if c := check(t, a, replay, true); c != CodeUsedSeq {
			t.Errorf("queue=%v: recheck of used seq 0: code %d, want %d", queue, c, CodeUsedSeq)
		}
		if c := check(t, a, tx0, false); c != CodeUsedSeq {
			t.Errorf("queue=%v: resend of committed tx: code %d, want %d", queue, c, CodeUsedSeq)
		}
	}
}

// The report's out-of-order pattern: [seq+2, seq, seq+1] reaches the
// mempool in that order; the queue's proposal puts them in sequence order
// and every one commits.
func TestOutOfOrderPromotion(t *testing.T) {
	for _, backend := range Backends {
		a := newApp(t, backend, true)
		k := KeyFor(3, "ooo", 0)
		txs := [][]byte{transfer(k, 2), transfer(k, 0), transfer(k, 1)}
		for _, tx := range txs {
			if c := check(t, a, tx, false); c != 0 {
				t.Fatalf("%s: check: code %d", backend, c)
			}
		}
		got, codes := block(t, a, 1, txs)
		want := [][]byte{txs[1], txs[2], txs[0]}
		if len(got) != 3 || string(got[0]) != string(want[0]) || string(got[1]) != string(want[1]) || string(got[2]) != string(want[2]) {
			t.Fatalf("%s: proposal not in sequence order", backend)
		}
		for i, c := range codes {
			if c != 0 {
				t.Errorf("%s: tx %d: code %d", backend, i, c)
			}
		}
		if seq, _, _ := a.Account(Address(k.Public().(ed25519.PublicKey))); seq != 3 {
			t.Errorf("%s: account at %d, want 3", backend, seq)
		}
	}
}

// A gap holds the txs after it until the missing one arrives.
func TestGapWaits(t *testing.T) {
	a := newApp(t, "pebbledb", true)
	k := KeyFor(3, "gap", 0)
	t0, t1, t2, t3 := transfer(k, 0), transfer(k, 1), transfer(k, 2), transfer(k, 3)
	got, _ := block(t, a, 1, [][]byte{t2, t0, t3})
	if len(got) != 1 || string(got[0]) != string(t0) {
		t.Fatalf("proposal with a gap at 1: %d txs, want only seq 0", len(got))
	}
	for _, tx := range [][]byte{t2, t3} { // recheck keeps the held txs
		if c := check(t, a, tx, true); c != 0 {
			t.Fatalf("recheck of a held tx: code %d", c)
		}
	}
	got, codes := block(t, a, 2, [][]byte{t2, t3, t1})
	if len(got) != 3 || string(got[0]) != string(t1) || string(got[1]) != string(t2) || string(got[2]) != string(t3) {
		t.Fatalf("after the gap filled: %d txs, want seq 1, 2, 3 in order", len(got))
	}
	for i, c := range codes {
		if c != 0 {
			t.Errorf("tx %d: code %d", i, c)
		}
	}
}

// FinalizeBlock applies its own rules whatever the proposer did.
func TestFinalizeBlockRules(t *testing.T) {
	k := KeyFor(5, "fb", 0)
	bad := transfer(k, 0)
	bad[len(bad)-2] ^= 1
	poor := (&Tx{Sequence: 1, Op: OpTransfer, Amount: InitialBalance + 1}).Sign(k)
	wide := (&Tx{Sequence: 2, Op: OpWrite, Keys: 50}).Sign(k)
	for _, tc := range []struct {
		name string
		txs  [][]byte
		want []uint32
		seq  uint64
	}{
		{"out of order in a block", [][]byte{transfer(k, 2), transfer(k, 0), transfer(k, 1)}, []uint32{CodeFutureSeq, 0, 0}, 2},
		{"replay in a block", [][]byte{transfer(k, 0), transfer(k, 0)}, []uint32{0, CodeUsedSeq}, 1},
		{"bad signature", [][]byte{bad}, []uint32{CodeBadSig}, 0},
		{"insufficient funds spends the sequence", [][]byte{transfer(k, 0), poor, wide}, []uint32{0, CodeNoFunds, 0}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newApp(t, "goleveldb", false) // baseline: proposals keep the given order
			_, codes := block(t, a, 1, tc.txs)
			for i := range tc.want {
				if codes[i] != tc.want[i] {
					t.Errorf("tx %d: code %d, want %d", i, codes[i], tc.want[i])
				}
			}
			if seq, _, _ := a.Account(Address(k.Public().(ed25519.PublicKey))); seq != tc.seq {
				t.Errorf("account at %d, want %d", seq, tc.seq)
			}
		})
	}
}

// Wide writes land in the store; transfers move balance; the state and
// height survive a reopen (what a restarted node's handshake relies on).
func TestStateAndRestart(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenDB(dir, "goleveldb")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := KeyFor(9, "st", 0)
	addr := Address(k.Public().(ed25519.PublicKey))
	wide := (&Tx{Sequence: 1, Op: OpWrite, Keys: 20}).Sign(k)
	block(t, a, 1, [][]byte{transfer(k, 0), wide})
	for i := range 20 {
		if v, _ := a.db.Get(append([]byte("w/"), WriteKey(addr, 1, i)...)); len(v) != 8 {
			t.Fatalf("write key %d missing", i)
		}
	}
	info, _ := a.Info(ctx, &abci.InfoRequest{})
	_ = a.Close()
	db, err = OpenDB(dir, "goleveldb")
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	info2, _ := b.Info(ctx, &abci.InfoRequest{})
	if info2.LastBlockHeight != 1 || string(info2.LastBlockAppHash) != string(info.LastBlockAppHash) || len(info.LastBlockAppHash) == 0 {
		t.Fatalf("after reopen: height %d hash %x, want 1 and %x", info2.LastBlockHeight, info2.LastBlockAppHash, info.LastBlockAppHash)
	}
	seq, bal, _ := b.Account(addr)
	if seq != 2 || bal != InitialBalance-1 {
		t.Fatalf("account: seq %d balance %d, want 2 and %d", seq, bal, InitialBalance-1)
	}
}
