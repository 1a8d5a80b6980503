package load

import (
	"crypto/ed25519"
	"time"

	"testing"

	"github.com/benchnet/benchnet/internal/app/accounts"
)

func TestAccountsWorkload(t *testing.T) {
	targets := []Target{{Node: "validator0"}, {Node: "full0"}, {Node: "full1"}}
	for _, tc := range []struct {
		name   string
		cfg    Config
		nodes  []string // target of each account
		first3 []uint64 // sequences of an account's first three txs
	}{
		{"round-robin-all sequential", Config{Target: "round-robin-all", Accounts: 4, TxsPerAccount: 5, Order: "sequential"},
			[]string{"validator0", "full0", "full1", "validator0"}, []uint64{0, 1, 2}},
		{"single node out-of-order", Config{Target: "full1", Accounts: 2, TxsPerAccount: 4, Order: "out-of-order", WriteKeys: 16},
			[]string{"full1", "full1"}, []uint64{2, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.RunID, cfg.Workload, cfg.Rate, cfg.Connections, cfg.Seed = "r1", "accounts", 10, 1, 5
			cfg.Size = 1024 // unused by the workload; the kv rules do not apply
			n, err := Expected(cfg, targets)
			if err != nil {
				t.Fatal(err)
			}
			if n != cfg.Accounts*cfg.TxsPerAccount {
				t.Fatalf("expected %d txs, want %d", n, cfg.Accounts*cfg.TxsPerAccount)
			}
			cfg.setDefaults()
			conns, err := cfg.plan(targets)
			if err != nil {
				t.Fatal(err)
			}
			codec, err := NewCodec(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for a, c := range conns {
				if c.target.Node != tc.nodes[a] || c.n != cfg.TxsPerAccount || c.seq0 != uint64(a*cfg.TxsPerAccount) {
					t.Errorf("account %d: conn %+v, want target %s", a, c, tc.nodes[a])
				}
				want := accounts.Address(AccountKey(cfg.Seed, cfg.RunID, a).Public().(ed25519.PublicKey))
				for i := range c.n {
					tx, err := accounts.Decode(codec.Encode(c.seq0+uint64(i), time.Time{}))
					if err != nil {
						t.Fatal(err)
					}
					if !tx.Verify() || accounts.Address(tx.PubKey) != want {
						t.Fatalf("account %d tx %d: bad signature or sender", a, i)
					}
					wantSeq := uint64(i)
					if i < 3 {
						wantSeq = tc.first3[i]
					}
					if tx.Sequence != wantSeq || tx.Sequence != SequenceAt(cfg.Order, i) {
						t.Errorf("account %d tx %d: sequence %d, want %d", a, i, tx.Sequence, wantSeq)
					}
					if cfg.WriteKeys > 0 && (tx.Op != accounts.OpWrite || int(tx.Keys) != cfg.WriteKeys) {
						t.Errorf("write op: %d keys %d", tx.Op, tx.Keys)
					}
				}
			}
		})
	}
	cfg := Config{RunID: "r", Workload: "accounts", Rate: 1, Connections: 1, Size: 1024, Target: "seed0", Accounts: 1, TxsPerAccount: 1, Order: "sequential"}
	if _, err := Expected(cfg, targets); err == nil {
		t.Error("a target outside the load's nodes passed")
	}
}
