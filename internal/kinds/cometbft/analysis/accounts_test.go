package analysis

import (
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestAccountsResults(t *testing.T) {
	p := &plan.Testnet{Load: manifest.Load{Workload: "accounts", Accounts: 2, TxsPerAccount: 4, Order: "out-of-order"}}
	row := func(seq uint64, conn int, state string, code int64, log string) TxRow {
		return TxRow{Tx: rundir.Tx{Seq: seq, Conn: conn, Node: "validator0", State: state, Code: code, Log: log}}
	}
	rows := []TxRow{
		// Account 0 (seqs 0-3 sent as sequences 2, 0, 1, 3): all in.
		row(0, 0, rundir.StateCommitted, 0, ""), row(1, 0, rundir.StateCommitted, 0, ""), row(2, 0, rundir.StateCommitted, 0, ""), row(3, 0, rundir.StateCommitted, 0, ""),
		// Account 1: the baseline's pattern, sequence 2 rejected (v1.0.1's
		// JSON-RPC error), 0 and 1 in, 3 rejected; plus a block failure.
		row(4, 1, rundir.StateRejected, -32603, "Internal error: broadcast error on transaction validation: tx AB is invalid: code=4, data=, log='x'"),
		row(5, 1, rundir.StateCommitted, 0, ""), row(6, 1, rundir.StateCommitted, 5, "funds"), row(7, 1, rundir.StateRejected, 4, ""),
	}
	r := accountsResults(p, rows)
	if r == nil {
		t.Fatal("no accounts results")
	}
	a0, a1 := r.PerAccount[0], r.PerAccount[1]
	if a0.Included != 4 || a0.HighestSequence != 3 || a0.Gaps != 0 || a0.InclusionRatio != 1 {
		t.Errorf("account 0: %+v", a0)
	}
	// Account 1 included only sequence 0 (sequence 1 failed in its block).
	if a1.Included != 1 || a1.Rejected != 2 || a1.FailedInBlock != 1 || a1.HighestSequence != 0 || a1.RejectCodes["4"] != 2 {
		t.Errorf("account 1: %+v", a1)
	}
	if r.Included != 5 || r.FullyIncluded != 1 || r.InclusionRatio != 5.0/8 {
		t.Errorf("totals: included %d fully %d ratio %v", r.Included, r.FullyIncluded, r.InclusionRatio)
	}
	// Out-of-order txs: the first three of each account: 3 + 1 of 6.
	if r.OutOfOrderRatio != 4.0/6 {
		t.Errorf("out-of-order inclusion %v, want %v", r.OutOfOrderRatio, 4.0/6)
	}
	if s := accountsSummary(r); !strings.Contains(s, "included 5 (62.5 %), 1 of 2 accounts fully included") {
		t.Errorf("summary:\n%s", s)
	}
	// A gap: sequence 1 missing below an included 3.
	p.Load.Order = "sequential"
	r = accountsResults(p, []TxRow{row(0, 0, rundir.StateCommitted, 0, ""), row(1, 0, rundir.StateLost, 0, ""), row(2, 0, rundir.StateCommitted, 0, ""), row(3, 0, rundir.StateCommitted, 0, "")})
	if g := r.PerAccount[0]; g.Gaps != 1 || g.HighestSequence != 3 || g.Lost != 1 {
		t.Errorf("gap: %+v", g)
	}
	if accountsResults(&plan.Testnet{}, rows) != nil {
		t.Error("a kv run got accounts results")
	}
}
