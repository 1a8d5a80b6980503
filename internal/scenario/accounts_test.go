package scenario

import (
	"fmt"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/app/accounts"
	"github.com/benchnet/benchnet/internal/release"
)

const subnetAccounts = "10.213.252.0/24"

// TestAccountsOutOfOrder is the report's queue-promotion test on 4 real
// v1.0.1 validators running the accounts app: every account sends
// [seq+2, seq, seq+1] and then sequentially. With the app-side queue every
// tx is included; with the baseline (future sequences rejected in CheckTx)
// the first tx and everything after the gap it leaves are rejected with
// code 4, so exactly seq 0 and 1 of each account are included. The queue
// runs again on v0.38.17: the same app serves both ABCI 2.0 releases.
func TestAccountsOutOfOrder(t *testing.T) {
	needRoot(t)
	v038 := release.Release{Name: "cometbft", Version: "v0.38.17"}
	needTool(t, v101, "cometbft")
	needTool(t, v038, "cometbft")
	exe := benchnetExe(t)
	const nAccounts, perAccount = 4, 20
	for _, tc := range []struct {
		release release.Release
		queue   bool
	}{{v101, true}, {v101, false}, {v038, true}} {
		queue := tc.queue
		t.Run(fmt.Sprintf("%s/app_mempool=%v", tc.release.Version, queue), func(t *testing.T) {
			text := fmt.Sprintf(`name = "accounts-test"
seed = 3
[network]
subnet = %q
[node.validator]
count = 4
release = %q
app = "accounts"
app_mempool = %v
[node.validator.config]
"consensus.timeout_commit" = "300ms"
[load]
workload = "accounts"
accounts = %d
txs_per_account = %d
order = "out-of-order"
rate = 20
warmup = "20s"
grace = "10s"
`, subnetAccounts, tc.release.String(), queue, nAccounts, perAccount)
			out := runHosted(t, "accounts-test.toml", text, exe, 90*time.Second)
			res := out.Results
			a, acc := res.Accounting, res.Accounts
			if acc == nil {
				t.Fatal("results.json has no per-account accounting")
			}
			t.Logf("sent %d committed %d rejected %d lost %d; included %d (%.1f %%), out-of-order txs %.1f %%",
				a.Sent, a.Committed, a.Rejected, a.Lost, acc.Included, 100*acc.InclusionRatio, 100*acc.OutOfOrderRatio)
			if a.Sent+a.SendErrors != nAccounts*perAccount || a.SendErrors != 0 {
				t.Fatalf("attempted %d (send errors %d), want exactly %d", a.Sent+a.SendErrors, a.SendErrors, nAccounts*perAccount)
			}
			if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
				t.Errorf("identity broken: %+v", a)
			}
			for _, o := range acc.PerAccount {
				if o.Gaps != 0 {
					t.Errorf("account %d: %d gaps below its highest sequence %d", o.Account, o.Gaps, o.HighestSequence)
				}
				if queue {
					if o.Included != perAccount || o.HighestSequence != perAccount-1 {
						t.Errorf("queue: account %d included %d of %d (highest %d, rejected %v, lost %d)",
							o.Account, o.Included, perAccount, o.HighestSequence, o.RejectCodes, o.Lost)
					}
					continue
				}
				future := o.RejectCodes[fmt.Sprint(accounts.CodeFutureSeq)]
				if o.Included != 2 || o.HighestSequence != 1 || future != perAccount-2 {
					t.Errorf("baseline: account %d included %d (want 2: seq 0 and 1), highest %d, future-sequence rejections %d (want %d)",
						o.Account, o.Included, o.HighestSequence, future, perAccount-2)
				}
			}
			if queue && (acc.InclusionRatio != 1 || acc.OutOfOrderRatio != 1) {
				t.Errorf("queue: inclusion %.3f, out-of-order %.3f, want 1", acc.InclusionRatio, acc.OutOfOrderRatio)
			}
			if !queue && a.Rejected == 0 {
				t.Error("baseline rejected nothing")
			}
		})
	}
}
