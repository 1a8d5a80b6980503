package load

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/benchnet/benchnet/internal/app/accounts"
	"github.com/benchnet/benchnet/internal/manifest"
)

// The accounts workload (docs/accounts.md): Accounts accounts, each with
// its own connection, send TxsPerAccount signed txs at Rate tx/s. Account
// a's txs have the run's seqs a×T … a×T+T−1 (T = TxsPerAccount) in send
// order; the account sequence of the i-th is SequenceAt(order, i). Every tx
// is signed by NewRunner, before the clock starts, so signing never delays
// the schedule; Encode only hands out the bytes.

// SequenceAt is the account sequence of an account's i-th tx (0-based send
// position): "out-of-order" sends [seq+2, seq, seq+1] first (Initia's
// queue-promotion pattern), then sequentially.
func SequenceAt(order string, i int) uint64 {
	if order == "out-of-order" && i < 3 {
		return [3]uint64{2, 0, 1}[i]
	}
	return uint64(i)
}

// AccountKey is account a's key in run runID of a testnet with seed: fresh
// accounts for every run (a second run on the same testnet starts at
// sequence 0), the same ones for a re-run of the same id.
func AccountKey(seed int64, runID string, a int) ed25519.PrivateKey {
	return accounts.KeyFor(seed, runID, a)
}

type accountsCodec struct {
	txs  [][]byte // by run seq
	size int
}

// newAccountsCodec signs every tx of the run.
func newAccountsCodec(cfg Config) (*accountsCodec, error) {
	n, t := cfg.Accounts, cfg.TxsPerAccount
	if n < 1 || t < 1 {
		return nil, fmt.Errorf("accounts workload: %d accounts × %d txs", n, t)
	}
	keys := make([]ed25519.PrivateKey, n)
	addrs := make([][accounts.AddrLen]byte, n)
	for a := range n {
		keys[a] = AccountKey(cfg.Seed, cfg.RunID, a)
		addrs[a] = accounts.Address(keys[a].Public().(ed25519.PublicKey))
	}
	c := &accountsCodec{txs: make([][]byte, n*t)}
	for a := range n {
		for i := range t {
			tx := accounts.Tx{Sequence: SequenceAt(cfg.Order, i)}
			if cfg.WriteKeys > 0 {
				tx.Op, tx.Keys = accounts.OpWrite, uint16(cfg.WriteKeys)
			} else {
				tx.Op, tx.To, tx.Amount = accounts.OpTransfer, addrs[(a+1)%n], 1
			}
			c.txs[a*t+i] = tx.Sign(keys[a])
		}
	}
	c.size = len(c.txs[0])
	return c, nil
}

func (c *accountsCodec) Encode(seq uint64, _ time.Time) []byte { return c.txs[seq] }
func (c *accountsCodec) Size() int                             { return c.size }

// accountsPlan: one connection per account, account a to target a mod
// len(targets) ("round-robin-all") or every account to the named node.
func (c *Config) accountsPlan(targets []Target) ([]connPlan, error) {
	pick := func(a int) Target { return targets[a%len(targets)] }
	if c.Target != manifest.TargetAllNodes {
		var named *Target
		for k := range targets {
			if targets[k].Node == c.Target {
				named = &targets[k]
			}
		}
		if named == nil {
			return nil, fmt.Errorf("load: target %q is not among the load's nodes", c.Target)
		}
		pick = func(int) Target { return *named }
	}
	conns := make([]connPlan, c.Accounts)
	for a := range conns {
		conns[a] = connPlan{idx: a, target: pick(a), n: c.TxsPerAccount, seq0: uint64(a * c.TxsPerAccount)}
	}
	return conns, nil
}
