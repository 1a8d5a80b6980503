package harvest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// TestOfflineRealStore: a real single-node chain of each release commits a
// run's txs and is killed with SIGKILL; Offline then reads its store with the
// release's own `cometbft inspect` and the accounting finds every tx, marked
// as recovered.
func TestOfflineRealStore(t *testing.T) {
	for _, v := range []string{"v1.0.1", "v0.38.17"} {
		t.Run(v, func(t *testing.T) {
			rel := release.Release{Name: "cometbft", Version: v}
			offlineRealStore(t, rel, testrel.NeedTool(t, rel, "cometbft"))
		})
	}
}

func offlineRealStore(t *testing.T, rel release.Release, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	d, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Testnet{Name: "offline", Nodes: []*plan.Node{{Name: "validator0", Role: "validator", Release: rel}}}
	pj, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(rundir.Plan, pj); err != nil {
		t.Fatal(err)
	}
	home := d.Join(rundir.Homes, "validator0")
	if out, err := exec.CommandContext(ctx, bin, "init", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	rpc := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.CommandContext(ctx, bin, "start", "--home", home, "--proxy_app=kvstore",
		"--rpc.laddr", "tcp://"+rpc, "--p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", testenv.FreePort(t)))
	logf, _ := os.Create(filepath.Join(dir, "node.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		logf.Close()
	})
	c := cometrpc.New("http://" + rpc)
	for {
		st, err := c.Status(ctx)
		if err == nil && st.Height >= 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node did not come up: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Blocks before this event hold no run tx: Offline starts there.
	if err := d.Event(rundir.EventWarmupDone, "", ""); err != nil {
		t.Fatal(err)
	}
	var sent strings.Builder
	sent.WriteString(strings.Join(rundir.SentCSV.Header, ",") + "\n")
	const n = 20
	for i := 0; i < n; i++ {
		tx := fmt.Sprintf("off%d=v%d", i, i)
		at := time.Now()
		result, code, log := broadcastSync(ctx, "http://"+rpc, tx)
		fmt.Fprintf(&sent, "%d,0,validator0,%s,%d,%d,%d,%s,%s,%s\n", i, cometrpc.TxHash([]byte(tx)), at.UnixNano(),
			at.UnixNano(), time.Now().UnixNano(), result, code, log)
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.WriteFile(rundir.SentCSV.Name, []byte(sent.String())); err != nil {
		t.Fatal(err)
	}
	if dr, err := Drain(ctx, []Node{{Name: "validator0", URL: "http://" + rpc}}, 15*time.Second); err != nil || !dr.Drained {
		t.Fatalf("drain: %s %v", dr, err)
	}
	// Like `kill -9` of a run: the node gets no chance to close its stores.
	killed = true
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	res, err := Offline(ctx, dir, "test: killed", nil)
	if err != nil {
		logs, _ := os.ReadFile(d.Join(rundir.Logs, "inspect-validator0.log"))
		t.Fatalf("offline: %v\ninspect log:\n%s", err, logs)
	}
	if len(res.Txs) < n {
		t.Errorf("harvested %d tx hashes, want at least %d", len(res.Txs), n)
	}
	var hi rundir.Harvest
	if err := d.ReadJSON(rundir.HarvestFile, &hi); err != nil {
		t.Fatal(err)
	}
	if hi.Recovered == nil || hi.Recovered.Node != "validator0" || hi.Recovered.Release != rel.String() {
		t.Errorf("harvest.json recovery = %+v", hi.Recovered)
	}
	if hi.From <= 1 {
		t.Errorf("range starts at %d: the blocks before warmup_done were not skipped", hi.From)
	}
	r, err := analysis.Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Accounting
	if a.Sent != n || a.Committed != n || a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
		t.Errorf("accounting %+v, want %d sent and committed", a, n)
	}
	if r.Recovered == nil || r.Recovered.Method != InspectMethod {
		t.Errorf("results.json recovery = %+v", r.Recovered)
	}
	if s := analysis.Summary(r); !strings.Contains(s, "recovered") {
		t.Errorf("summary does not say recovered:\n%s", s)
	}
	// No inspect is left behind.
	if out, _ := exec.Command("pgrep", "-f", "inspect --home "+home).Output(); len(out) > 0 {
		t.Errorf("inspect still running: %s", out)
	}
}

// A v0.34 store (Tendermint Core or CometBFT) cannot be opened offline:
// the release has no `inspect`, and the error says so before any build.
func TestOfflineRefusesV034(t *testing.T) {
	dir := t.TempDir()
	d, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel := release.Release{Name: "tendermint", Version: "v0.34.22"}
	p := &plan.Testnet{Name: "offline", Nodes: []*plan.Node{{Name: "validator0", Role: "validator", Release: rel}}}
	pj, _ := p.JSON()
	if err := d.WriteFile(rundir.Plan, pj); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(d.Join(rundir.Homes, "validator0", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Event(rundir.EventWarmupDone, "", ""); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BENCHNET_CACHE", t.TempDir()) // nothing may be built
	_, err = Offline(context.Background(), dir, "test", nil)
	if err == nil || !strings.Contains(err.Error(), "validator0: tendermint@v0.34.22 has no `inspect` command") {
		t.Fatalf("err = %v", err)
	}
}
