package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// appMempoolManifest is examples/initia-upstream.toml's app variant,
// small: 1 validator + 2 full nodes of v0.40.0 whose accounts apps keep
// the mempool, 4 accounts x 40 txs sent out of order.
const appMempoolManifest = `name = "appmempool"
seed = 1
[network]
subnet = "10.213.44.0/24"
[node.validator]
count = 1
release = "cometbft@v0.40.0"
app = "accounts"
mempool = "app"
[node.full]
count = 2
release = "cometbft@v0.40.0"
app = "accounts"
mempool = "app"
[load]
workload = "accounts"
accounts = 4
txs_per_account = 40
order = "out-of-order"
target = "round-robin-all"
rate = 20
method = "sync"
warmup = "20s"
grace = "20s"
`

// TestAppMempool runs upstream's app-side mempool on real v0.40.0 nodes
// against the accounts app: each node's config says mempool.type "app",
// every tx sent to any node (out of order) is committed, which only
// happens when InsertTx and ReapTxs carry txs between the apps' pools
// (the validator proposes from its own pool), and the peak mempool is
// the apps' pools, not the nodes' empty one.
func TestAppMempool(t *testing.T) {
	testenv.NeedRoot(t)
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v0.40.0"}, "cometbft")
	m := filepath.Join(t.TempDir(), "appmempool.toml")
	if err := os.WriteFile(m, []byte(appMempoolManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out := testenv.OutputDir(t)
	if b, err := exec.Command(benchnetBinary(t), "run", m, "--output", out).CombinedOutput(); err != nil {
		t.Fatalf("benchnet run: %v\n%s", err, b)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-appmempool"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	dir := dirs[0]
	for _, n := range []string{"validator0", "full0", "full1"} {
		var cfg struct {
			Mempool struct {
				Type string `toml:"type"`
			} `toml:"mempool"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "homes", n, "config", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := toml.Unmarshal(b, &cfg); err != nil || cfg.Mempool.Type != "app" {
			t.Errorf("%s: mempool.type %q (%v)", n, cfg.Mempool.Type, err)
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "logs", n+"-app.log")); !strings.Contains(string(log), "abci_mempool true") {
			t.Errorf("%s's app did not start with its pool:\n%s", n, log)
		}
	}
	res, err := (&rundir.Dir{Path: dir}).ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	acc := res.Accounts
	if acc == nil || res.Accounting.Sent != 160 || acc.InclusionRatio != 1 || acc.OutOfOrderRatio != 1 {
		t.Errorf("accounting %+v, accounts %+v: want all 160 txs committed, the out-of-order ones too", res.Accounting, acc)
	}
	if res.PeakMempool == 0 {
		t.Error("peak mempool 0: the harness read the nodes' (empty) mempools, not the apps' pools")
	}
}
