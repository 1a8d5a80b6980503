package manifest

import (
	"slices"
	"strconv"
	"strings"
)

// The accounts workload and app (docs/accounts.md).
const (
	WorkloadKV       = "kv"
	WorkloadAccounts = "accounts"
	AppAccounts      = "accounts"
	// TargetAllNodes sends account k's txs to the k-th non-seed node, round
	// robin over validators and full nodes (as Initia's benchmark sends).
	TargetAllNodes = "round-robin-all"

	DefaultAccounts      = 10
	DefaultTxsPerAccount = 200
	DefaultOrder         = "sequential"
	// MaxAccounts bounds the accounts: one connection each.
	MaxAccounts = MaxConnections
	// MaxWriteKeys is the accounts app's own bound on a write's keys.
	MaxWriteKeys = 1024
)

// AccountsBackends are the stores the accounts app can open.
var AccountsBackends = []string{"goleveldb", "pebbledb"}

func (l *Load) accountsDefaults() {
	// Workload stays "" for kv, so plans and run directories of kv runs
	// read as before.
	if l.Workload != WorkloadAccounts {
		return
	}
	if l.Accounts == 0 {
		l.Accounts = DefaultAccounts
	}
	if l.TxsPerAccount == 0 {
		l.TxsPerAccount = DefaultTxsPerAccount
	}
	setStr(&l.Order, DefaultOrder)
	setStr(&l.Target, TargetAllNodes)
	setStr(&l.Method, "sync") // a rejected sequence shows its code
}

// checkAccountsLoad is CheckLoad's part for the workload fields; it says
// whether the generic kv rules (size, count, target) apply.
func checkAccountsLoad(l Load, add func(field, format string, args ...any)) (kvRules bool) {
	switch l.Workload {
	case WorkloadKV, "":
		for _, f := range []struct {
			name string
			set  bool
		}{{"accounts", l.Accounts != 0}, {"txs_per_account", l.TxsPerAccount != 0}, {"order", l.Order != ""}, {"write_keys", l.WriteKeys != 0}} {
			if f.set {
				add("load."+f.name, "only the \"accounts\" workload uses it: set workload = \"accounts\" or remove it")
			}
		}
		return true
	case WorkloadAccounts:
	default:
		add("load.workload", "%q: want \"kv\" or \"accounts\"", l.Workload)
		return true
	}
	if l.Accounts < 1 || l.Accounts > MaxAccounts {
		add("load.accounts", "must be 1 to %d (one connection each), got %d", MaxAccounts, l.Accounts)
	}
	if l.TxsPerAccount < 1 || l.TxsPerAccount > MaxTxs {
		add("load.txs_per_account", "must be 1 to %d, got %d", MaxTxs, l.TxsPerAccount)
	} else if l.Accounts >= 1 && l.Accounts*l.TxsPerAccount > MaxTxs {
		add("load.txs_per_account", "accounts × txs_per_account = %d, more than the %d one run may send", l.Accounts*l.TxsPerAccount, MaxTxs)
	}
	if !slices.Contains([]string{"sequential", "out-of-order"}, l.Order) {
		add("load.order", "%q: want \"sequential\" or \"out-of-order\"", l.Order)
	} else if l.Order == "out-of-order" && l.TxsPerAccount < 3 && l.TxsPerAccount >= 1 {
		add("load.order", "\"out-of-order\" sends [seq+2, seq, seq+1] first: want txs_per_account >= 3, got %d", l.TxsPerAccount)
	}
	if l.WriteKeys < 0 || l.WriteKeys > MaxWriteKeys {
		add("load.write_keys", "must be 0 (transfers) to %d keys per tx, got %d", MaxWriteKeys, l.WriteKeys)
	}
	if l.Count != 0 {
		add("load.count", "the accounts workload sends accounts × txs_per_account txs: remove count")
	}
	if l.Transport != "websocket" {
		add("load.transport", "%q: the accounts workload needs \"websocket\" (one ordered connection per account; concurrent HTTP requests reorder its sequences)", l.Transport)
	}
	if l.Target == "" || (l.Target != TargetAllNodes && !nameRE.MatchString(l.Target)) {
		add("load.target", "%q: want %q or a node name (e.g. \"validator0\")", l.Target, TargetAllNodes)
	}
	return false
}

// validateAccounts checks what needs the whole manifest: the workload's
// app and target node, the accounts app's release and store.
func (m *Manifest) validateAccounts(add func(field, format string, args ...any)) {
	accountsLoad := m.Load.Workload == WorkloadAccounts
	var nodes []string
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		f := "node." + name
		if g.Role != "seed" {
			for i := range min(max(g.Count, 0), MaxNodes) {
				nodes = append(nodes, name+strconv.Itoa(i))
			}
		}
		if g.AppMempool && g.App != AppAccounts {
			add(f+".app_mempool", "only the \"accounts\" app has an app-side mempool: set app = \"accounts\" or remove it")
		}
		if accountsLoad && g.Role != "seed" && g.App != AppAccounts && !SchemaOf(g.Kind).Publishes {
			if m.pos.has(f + ".app") {
				add(f+".app", "%q: the accounts workload needs app = \"accounts\" on every node it may reach", g.App)
			} else {
				add("load.workload", "\"accounts\" needs app = \"accounts\" on every node it may reach: [%s] runs %q (the default)", f, g.App)
			}
		}
		if g.App != AppAccounts {
			continue
		}
		if _, v, ok := ParseRelease(g.Release); ok && olderThan038(v) {
			add(f+".app", "\"accounts\" is an ABCI 2.0 app (PrepareProposal, FinalizeBlock): %s speaks an older ABCI; use cometbft@v0.38.x or later", g.Release)
		}
		if v, ok := g.Config["db_backend"]; ok {
			if s, _ := v.(string); !slices.Contains(AccountsBackends, s) {
				add(f+".config.db_backend", "%v: the accounts app shares the node's db_backend and supports %s", v, strings.Join(AccountsBackends, ", "))
			}
		}
	}
	if accountsLoad && m.Load.Target != TargetAllNodes && nameRE.MatchString(m.Load.Target) && !slices.Contains(nodes, m.Load.Target) {
		add("load.target", "%q is not a validator or full node of this testnet (have %s)", m.Load.Target, strings.Join(nodes, ", "))
	}
}

// olderThan038 is true for v0.x releases before v0.38 (ABCI 1.0 and older).
func olderThan038(v string) bool {
	minor, ok := v0Minor(v)
	return ok && minor < 38
}

// v0Minor is x of a v0.x.y version (ok false for v1 and later).
func v0Minor(v string) (int, bool) {
	minor, ok := strings.CutPrefix(v, "v0.")
	if !ok {
		return 0, false
	}
	minor, _, _ = strings.Cut(minor, ".")
	n, err := strconv.Atoi(minor)
	return n, err == nil
}
