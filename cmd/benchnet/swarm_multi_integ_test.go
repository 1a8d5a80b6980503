package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// swarm12 is a 12-node testnet (a seed, 8 validators, 3 full nodes) whose
// nodes are placed over three zones by the swarm nodes' labels.
func swarm12(t *testing.T, subnet string, engines []string) string {
	t.Helper()
	q := make([]string, len(engines))
	for i, e := range engines {
		q[i] = strconv.Quote(e)
	}
	m := fmt.Sprintf(`name = "quickstart"
seed = 3

[network]
subnet = %q
topology = "full"

[node.seed]
count = 1
zones = ["z0"]

[node.validator]
count = 8
release = "cometbft@v1.0.1"
app = "kvstore"
zones = ["z0", "z1", "z2"]

[node.full]
count = 3
release = "cometbft@v1.0.1"
app = "kvstore"
zones = ["z0", "z1", "z2"]

[infra]
runner = "swarm"
engines = [%s]

[load]
rate = 100
connections = 1
duration = "15s"
size = 1024
target = "round-robin"
`, subnet, strings.Join(q, ", "))
	p := filepath.Join(t.TempDir(), "swarm12.toml")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// engineLabelled lists what still carries the run's label on every engine.
func engineLabelled(t *testing.T, c *swarmtest.Cluster, runID string) []string {
	t.Helper()
	ctx := context.Background()
	var left []string
	for _, e := range c.Engines() {
		what := [][]string{{"ps", "--all"}, {"network", "ls"}, {"volume", "ls"}}
		if e.Host == "" {
			what = append(what, []string{"service", "ls"})
		}
		for _, w := range what {
			out, err := e.Docker(ctx, append(append([]string{}, w...), "--quiet", "--filter", "label="+dockercli.Label+"="+runID)...)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			for _, id := range strings.Fields(out) {
				left = append(left, e.Name+": "+w[0]+" "+id)
			}
		}
	}
	return left
}

var swarm12Nodes = []string{"seed0", "validator0", "validator1", "validator2", "validator3", "validator4",
	"validator5", "validator6", "validator7", "full0", "full1", "full2"}

// TestSwarmMultiEngine: on a swarm of three engines (the host's and two in
// network namespaces, swarmtest), a 12-node testnet placed by zone labels
// commits its whole load; proc.csv has CPU and RSS of all 12 (the host's
// by /proc, the others' from their own process metrics), logs/ has all 12;
// `run`, and `down` after a kill -9 of `up`, leave nothing on any engine.
func TestSwarmMultiEngine(t *testing.T) {
	testrel.NeedTool(t, release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft")
	bin := benchnetBinary(t)
	c := swarmtest.New(t, swarmtest.Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})

	t.Run("run", func(t *testing.T) {
		out := testenv.OutputDir(t)
		start := time.Now()
		b, err := exec.Command(bin, "run", swarm12(t, "10.213.247.0/24", c.Hosts()), "--output", out).CombinedOutput()
		if err != nil {
			t.Fatalf("benchnet run: %v\n%s", err, b)
		}
		dir := onlyRunDir(t, out)
		acct, _ := os.ReadFile(filepath.Join(dir, "results.json"))
		var res struct{ Accounting any }
		_ = json.Unmarshal(acct, &res)
		t.Logf("benchnet run on 3 engines: %s; %s; accounting %+v", time.Since(start).Round(time.Millisecond),
			readyRe.FindString(string(b)), res.Accounting)
		checkAllCommitted(t, dir)
		local, remote := procNodes(t, dir)
		for _, n := range swarm12Nodes {
			if !local[n] && !remote[n] {
				t.Errorf("proc.csv has no rows of %s", n)
			}
			if fi, err := os.Stat(filepath.Join(dir, "logs", n+".log")); err != nil || fi.Size() == 0 {
				t.Errorf("log of %s: %v", n, err)
			}
		}
		// No shared filesystem needed: every node ran on a copy of its home
		// in a volume of its engine, so none wrote its stores into the run
		// directory's homes (a bound home would hold data/blockstore.db).
		for _, n := range swarm12Nodes {
			if _, err := os.Stat(filepath.Join(dir, "homes", n, "config", "genesis.json")); err != nil {
				t.Errorf("home of %s: %v", n, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "homes", n, "data", "blockstore.db")); err == nil {
				t.Errorf("%s wrote its block store into the run directory: its home was bound, not copied", n)
			}
		}
		// Zone z0 is the host's engine: its 5 nodes have host pids, the 7
		// of z1 and z2 ran on the other engines.
		if len(local) != 5 || len(remote) != 7 {
			t.Errorf("nodes with a host pid %v, from their metrics %v: want 5 and 7", local, remote)
		}
		if left := engineLabelled(t, c, swarmState(t, dir).RunID); len(left) > 0 {
			t.Errorf("left after run: %v", left)
		}
	})

	t.Run("kill9-down", func(t *testing.T) {
		out := testenv.OutputDir(t)
		up := exec.Command(bin, "up", swarm12(t, "10.213.248.0/24", c.Hosts()), "--output", out)
		var log bytes.Buffer
		up.Stdout, up.Stderr = &log, &log
		if err := up.Start(); err != nil {
			t.Fatal(err)
		}
		var dir string
		t.Cleanup(func() {
			if dir != "" {
				_ = exec.Command(bin, "down", dir).Run()
			}
		})
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) && (dir == "" || reached(dir) < 12) {
			if dirs, _ := filepath.Glob(filepath.Join(out, "*-quickstart")); len(dirs) == 1 {
				dir = dirs[0]
			}
			time.Sleep(200 * time.Millisecond)
		}
		if dir == "" || reached(dir) < 12 {
			_ = up.Process.Kill()
			t.Fatalf("12 nodes not running within 3m:\n%s", log.String())
		}
		if err := up.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = up.Wait()
		runID := swarmState(t, dir).RunID
		left := engineLabelled(t, c, runID)
		var onWorkers int
		for _, l := range left {
			if strings.HasPrefix(l, "w") {
				onWorkers++
			}
		}
		if onWorkers == 0 {
			t.Fatalf("after kill -9 nothing of the run on the other engines (%v): the test would prove nothing", left)
		}
		downLeavesNothing(t, bin, dir, func() []string { return engineLabelled(t, c, runID) })
	})
}

// reached counts the nodes state.json records an RPC endpoint of.
func reached(dir string) int {
	s, err := statefile.Read(filepath.Join(dir, rundir.State))
	if err != nil {
		return 0
	}
	n := 0
	for _, ep := range s.Endpoints() {
		if ep.RPC != "" {
			n++
		}
	}
	return n
}

// procNodes splits proc.csv's nodes by whether /proc (a pid) or the node's
// own metrics (pid 0) gave their rows; each needs two rows or more.
func procNodes(t *testing.T, dir string) (local, remote map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics", "proc.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	pid0 := map[string]bool{}
	for _, r := range rows[1:] {
		if r[1] == rundir.HarnessNode {
			continue
		}
		rss, _ := strconv.ParseFloat(r[3], 64)
		if rss <= 0 {
			t.Errorf("proc.csv row without RSS: %v", r)
		}
		count[r[1]]++
		pid0[r[1]] = r[2] == "0"
	}
	local, remote = map[string]bool{}, map[string]bool{}
	for n, k := range count {
		if k < 2 {
			continue
		}
		if pid0[n] {
			remote[n] = true
		} else {
			local[n] = true
		}
	}
	return local, remote
}
