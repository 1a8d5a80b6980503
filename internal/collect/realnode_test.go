package collect

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// TestRealNode scrapes a real cometbft v1.0.1 node (in-process kvstore,
// Prometheus on, loopback ports picked free) and checks that its height
// advances in the samples and its process shows up in proc.csv.
func TestRealNode(t *testing.T) {
	_, bin := testrel.NeedCometBFT(t, "v1.0.1")
	nodeHome := t.TempDir()
	if out, err := exec.Command(bin, "init", "--home", nodeHome).CombinedOutput(); err != nil {
		t.Fatalf("cometbft init: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(nodeHome, "config", "config.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	prom := testenv.FreePort(t)
	for _, r := range []struct{ re, repl string }{
		{`(?m)^prometheus = false`, `prometheus = true`},
		{`(?m)^prometheus_listen_addr = .*`, fmt.Sprintf(`prometheus_listen_addr = "127.0.0.1:%d"`, prom)},
		{`(?m)^laddr = "tcp://127.0.0.1:26657"`, fmt.Sprintf(`laddr = "tcp://127.0.0.1:%d"`, testenv.FreePort(t))},
		{`(?m)^laddr = "tcp://0.0.0.0:26656"`, fmt.Sprintf(`laddr = "tcp://127.0.0.1:%d"`, testenv.FreePort(t))},
		{`(?m)^timeout_commit = .*`, `timeout_commit = "200ms"`},
	} {
		re := regexp.MustCompile(r.re)
		if !re.Match(cfg) {
			t.Fatalf("config.toml has no %s", r.re)
		}
		cfg = re.ReplaceAll(cfg, []byte(r.repl))
	}
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	node := exec.Command(bin, "start", "--home", nodeHome, "--proxy_app=kvstore", "--log_level=error")
	node.Stderr, node.Stdout = os.Stderr, nil
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })

	dir, err := rundir.Create(t.TempDir(), "real", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	c := New(dir, []Target{{Node: "validator0", MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", prom),
		PID: func() int { return node.Process.Pid }}}, 250*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ss, _, err := rundir.SamplesCSV.ReadFileFilter(rundir.SamplesCSV.Path(dir), func(s *rundir.Sample) bool { return s.Metric == "cometbft_consensus_height" })
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) < 3 || ss[len(ss)-1].Value <= ss[0].Value {
		t.Fatalf("height samples do not advance: %+v", ss)
	}
	proc := readCSV(t, rundir.ProcCSV.Path(dir))
	var rss int64
	for _, r := range proc[1:] {
		if r[1] == "validator0" {
			fmt.Sscan(r[3], &rss)
		}
	}
	if rss < 10<<20 {
		t.Errorf("node RSS %d bytes in proc.csv", rss)
	}
	st := c.Stats()
	t.Logf("real node: %d scrapes, %d failures (startup), %d sample rows, height %v → %v, RSS %d MiB",
		st.Scrapes, st.Failures, st.Samples, ss[0].Value, ss[len(ss)-1].Value, rss>>20)
}
