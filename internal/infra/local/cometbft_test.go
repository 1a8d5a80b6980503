package local

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// cachedCometBFT is the cached v1.0.1 release binary (`benchnet setup`).
func cachedCometBFT(t *testing.T) string {
	t.Helper()
	_, bin := testrel.NeedCometBFT(t, "v1.0.1")
	return bin
}

// TestCometBFTNode runs a real one-validator CometBFT as nobody inside a
// node's namespace and reads its RPC from the root namespace.
func TestCometBFTNode(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	bin := cachedCometBFT(t)
	r, p := setup(t, "10.213.247.0/24", 1)
	n := p.Nodes[0]
	ctx := context.Background()
	// Not t.TempDir: its parent is 0700 and nobody must reach the home.
	root, err := os.MkdirTemp("", "benchnet-local-cometbft-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, n.Name)
	if out, err := exec.Command(bin, "init", "--home", home).CombinedOutput(); err != nil {
		t.Fatalf("cometbft init: %v\n%s", err, out)
	}
	log := filepath.Join(root, "node.log")
	pid, err := r.Start(ctx, infra.Process{
		Node: n.Name, Name: "node", Dir: home, LogPath: log, Unprivileged: true, ChownDirs: []string{home},
		Argv: []string{bin, "start", "--home", home, "--proxy_app", "kvstore",
			"--rpc.laddr", "tcp://0.0.0.0:" + strconv.Itoa(n.RPCPort)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := proctable.NodePIDs(r.StatePath)[n.Name]; got != pid {
		t.Errorf("NodePIDs[%s] = %d, want %d (the cometbft process itself)", n.Name, got, pid)
	}
	// ip netns exec and setpriv exec (no fork): the pid becomes cometbft.
	var comm []byte
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if comm, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(comm) == "cometbft\n" {
			break
		}
	}
	if string(comm) != "cometbft\n" {
		t.Errorf("pid %d is %q, want cometbft", pid, comm)
	}

	var height int64
	deadline := time.Now().Add(20 * time.Second)
	for height < 2 && time.Now().Before(deadline) {
		select {
		case ex := <-r.Exited():
			b, _ := os.ReadFile(log)
			t.Fatalf("cometbft exited: %s\n%s", ex.Status, b)
		case <-time.After(200 * time.Millisecond):
		}
		height = rpcHeight(n.RPCURL())
	}
	if height < 2 {
		b, _ := os.ReadFile(log)
		t.Fatalf("node at height %d after 20s, want >= 2 via %s\n%s", height, n.RPCURL(), b)
	}
	t0 := time.Now()
	if err := r.Stop(ctx, n.Name, "node"); err != nil {
		t.Fatal(err)
	}
	t.Logf("height %d reached; SIGTERM stop took %s", height, time.Since(t0).Round(time.Millisecond))
	if d := time.Since(t0); d >= DefaultStopTimeout {
		t.Errorf("cometbft needed SIGKILL (stop took %s)", d)
	}
}

func rpcHeight(url string) int64 {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url + "/status")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var st struct {
		Result struct {
			SyncInfo struct {
				Height string `json:"latest_block_height"`
			} `json:"sync_info"`
		} `json:"result"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return 0
	}
	h, _ := strconv.ParseInt(st.Result.SyncInfo.Height, 10, 64)
	return h
}
