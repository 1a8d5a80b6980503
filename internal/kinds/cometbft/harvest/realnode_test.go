package harvest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/analysis"

	"github.com/benchnet/benchnet/internal/testenv/testrel"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestRealNode runs a real single-validator CometBFT (kvstore) on loopback,
// sends txs (some invalid) with broadcast_tx_sync, then drains, harvests and
// analyzes the directory: the whole after-load path against a real chain.
func TestRealNode(t *testing.T) {
	testenv.Integration(t)
	for _, release := range []string{"cometbft@v1.0.1", "cometbft@v0.38.17"} {
		t.Run(release, func(t *testing.T) {
			_, bin := testrel.NeedCometBFT(t, strings.TrimPrefix(release, "cometbft@"))
			runRealNode(t, bin)
		})
	}
}

func runRealNode(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	home := filepath.Join(t.TempDir(), "node")
	if out, err := exec.CommandContext(ctx, bin, "init", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	rpc := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.CommandContext(ctx, bin, "start", "--home", home, "--proxy_app=kvstore",
		"--rpc.laddr", "tcp://"+rpc, "--p2p.laddr", fmt.Sprintf("tcp://127.0.0.1:%d", testenv.FreePort(t)))
	logf, _ := os.Create(filepath.Join(home, "node.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })

	c := cometrpc.New("http://" + rpc)
	var from int64
	for {
		st, err := c.Status(ctx)
		if err == nil && st.Height >= 1 {
			from = st.Height + 1
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node did not come up: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}

	// 30 txs at 20 tx/s; every 10th is invalid for kvstore (no '=').
	dir := t.TempDir()
	var sent strings.Builder
	sent.WriteString(strings.Join(rundir.SentCSV.Header, ",") + "\n")
	t0 := time.Now()
	for i := 0; i < 30; i++ {
		intended := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		time.Sleep(time.Until(intended))
		tx := fmt.Sprintf("k%d=v%d", i, i)
		if i%10 == 9 {
			tx = fmt.Sprintf("bad%d", i)
		}
		sentAt := time.Now()
		result, code, log := broadcastSync(ctx, "http://"+rpc, tx)
		fmt.Fprintf(&sent, "%d,0,n0,%s,%d,%d,%d,%s,%s,%s\n", i, cometrpc.TxHash([]byte(tx)), intended.UnixNano(),
			sentAt.UnixNano(), time.Now().UnixNano(), result, code, log)
	}
	os.WriteFile(filepath.Join(dir, rundir.SentCSV.Name), []byte(sent.String()), 0o644)

	dr, err := Drain(ctx, []Node{{Name: "n0", URL: "http://" + rpc}}, 10*time.Second)
	if err != nil || !dr.Drained {
		t.Fatalf("drain: %s %v", dr, err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Harvest(ctx, "http://"+rpc, from, st.Height, dir); err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", analysis.Summary(res))
	want := rundir.Accounting{Sent: 30, Committed: 27, Rejected: 3}
	if res.Accounting != want {
		t.Errorf("accounting = %+v, want %+v", res.Accounting, want)
	}
	// The chain's own clock: every H+1 latency is positive and below a few
	// block intervals on an idle single node.
	if l := res.LatencyOther; l.N != 27 || l.Min <= 0 || l.Max > 5000 {
		t.Errorf("H+1 latency = %+v", l)
	}
	if res.TxPerSecond <= 0 || !res.Valid {
		t.Errorf("tps = %v valid = %v %q", res.TxPerSecond, res.Valid, res.Invalid)
	}
}

// broadcastSync sends tx and classifies the answer as sent.csv does. v1.x
// answers a CheckTx rejection with a JSON-RPC error ("tx ... is invalid:
// code=2"), v0.38 with a result whose code is non-zero.
func broadcastSync(ctx context.Context, base, tx string) (result, code, log string) {
	u := base + "/broadcast_tx_sync?tx=" + url.QueryEscape(`"`+tx+`"`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rundir.ResultSendError, "", strings.ReplaceAll(err.Error(), ",", ";")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Result *struct {
			Code uint32 `json:"code"`
		} `json:"result"`
		Error *struct {
			Data string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return rundir.ResultSendError, "", "not JSON-RPC"
	}
	switch {
	case r.Error != nil && strings.Contains(r.Error.Data, "code="):
		c := r.Error.Data[strings.Index(r.Error.Data, "code=")+5:]
		c, _, _ = strings.Cut(c, ",")
		return rundir.ResultRejected, c, "checktx"
	case r.Error != nil:
		return rundir.ResultSendError, "", "rpc error"
	case r.Result.Code != 0:
		return rundir.ResultRejected, fmt.Sprint(r.Result.Code), "checktx"
	}
	return rundir.ResultOK, "", ""
}
