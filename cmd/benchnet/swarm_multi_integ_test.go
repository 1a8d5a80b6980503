package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// swarm12 is a 12-node testnet (a seed, 8 validators, 3 full nodes) whose
// nodes are placed over three zones by the swarm nodes' labels.
func swarm12(t *testing.T, subnet string, engines []string) string {
	t.Helper()
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
`, subnet, tomlStrings(engines))
	p := filepath.Join(t.TempDir(), "swarm12.toml")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// swarmFaults is 4 validators and 2 rotating full nodes over three zones,
// with a kill, a restart and a pause (every link 2 ms, so each node runs
// under its link agent) and 4 rotate cycles, under a light load;
// thresholds give local's verdicts. A disconnect through the agents'
// control ports reached them in 1 of 3 runs (NOTES): refused on swarm for
// now. (10 cycles over 180 s ran here too, all caught up in 9.4-22.0 s,
// HISTORY 2026-11-30; CI runs 4 to stay under its time.)
func swarmFaults(t *testing.T, subnet string, engines []string) string {
	t.Helper()
	m := fmt.Sprintf(`name = "swarm-faults"
seed = 9
halt_limit = "60s"

[network]
subnet = %q
topology = "full"
delay = "2ms"

[node.validator]
count = 4
release = "cometbft@v1.0.1"
zones = ["z0", "z1", "z2"]

[node.ephemeral]
role = "full"
count = 2
release = "cometbft@v1.0.1"
zones = ["z1", "z2"]

[rotate]
group = "ephemeral"
at_a_time = 2
cycles = 4
start = "5s"
keep = "2s"
catchup_timeout = "1m"

[[perturb]]
at = "8s"
node = "validator1"
action = "kill"
for = "6s"

[[perturb]]
at = "20s"
node = "validator2"
action = "restart"
for = "3s"

[[perturb]]
at = "30s"
node = "validator3"
action = "pause"

[[perturb]]
at = "36s"
node = "validator3"
action = "resume"

[infra]
runner = "swarm"
engines = [%s]

[load]
rate = 50
connections = 1
duration = "90s"
size = 1024
target = "round-robin"

[thresholds]
halted = "== false"
caught_up = "== true"
`, subnet, tomlStrings(engines))
	p := filepath.Join(t.TempDir(), "swarm-faults.toml")
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
		// Each of the 3 machines (engines) is its own load series, from
		// its exporter (issue 32 item 7), rows every second of the run.
		checkMachines(t, dir, 3)
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
		// Zone z0 is the host's engine: its 5 nodes are reached at its
		// address, the 7 of z1 and z2 at their engines' addresses. The
		// other engines run on this machine too, so every node has a host
		// pid and its CPU counts as the run's own in the testbed check
		// (a QA on this swarm read them as load from outside the run).
		p, err := plan.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		at := placement(t, dir)
		z0 := map[string]bool{}
		for _, n := range p.Nodes {
			if n.Zone == "z0" {
				z0[at[n.Name]] = true
			}
		}
		here, away := 0, 0
		for _, n := range p.Nodes {
			switch {
			case z0[at[n.Name]]:
				here++
			case at[n.Name] != "":
				away++
			}
		}
		if len(z0) != 1 || here != 5 || away != 7 {
			t.Errorf("nodes reached at %v: want the 5 of z0 at one address, the other 7 elsewhere", at)
		}
		if len(local) != 12 || len(remote) != 0 {
			t.Errorf("nodes with a host pid %v, from their metrics %v: want all 12 with a pid (every engine runs on this machine)", local, remote)
		}
		if left := engineLabelled(t, c, swarmState(t, dir).RunID); len(left) > 0 {
			t.Errorf("left after run: %v", left)
		}
	})

	// Gossipsub hosts across the engines: they dial each other by name,
	// and the traces of those on the other engines come back from their
	// volumes there (issue 32 item 2).
	t.Run("gossip", func(t *testing.T) {
		out := testenv.OutputDir(t)
		m := gossipLineManifest(t, "10.213.249.0/24", []string{"z0", "z1", "z2"},
			"\n[infra]\nrunner = \"swarm\"\nengines = ["+tomlStrings(c.Hosts())+"]\n")
		start := time.Now()
		b, err := exec.Command(bin, "run", m, "--output", out).CombinedOutput()
		if err != nil {
			t.Fatalf("benchnet run: %v\n%s", err, b)
		}
		t.Logf("gossip run on 3 engines: %s", time.Since(start).Round(time.Millisecond))
		dir := onlyRunDirOf(t, out, "gossip-runner")
		// Zone z0 is the host's engine: hosts of z1 and z2 ran on the
		// others, so their traces came back from volumes there.
		p, err := plan.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		var away []string
		for _, n := range p.Nodes {
			if n.Zone != "z0" && n.Index > 0 {
				away = append(away, n.Name)
			}
		}
		if len(away) == 0 {
			t.Fatal("no host past the publisher was placed on another engine: the test would prove nothing")
		}
		t.Logf("hosts on the other engines: %v", away)
		checkGossipTraces(t, dir)
		if left := engineLabelled(t, c, swarmState(t, dir).RunID); len(left) > 0 {
			t.Errorf("left after run: %v", left)
		}
	})

	// Emulated links across the engines (issue 32 item 1): every node's
	// task runs under its NFQUEUE agent; the zone matrix is measured back
	// between every pair, within the agents' lateness bound.
	t.Run("links", func(t *testing.T) { swarmLinksCase(t, bin, c) })

	// Faults and node churn across the engines (issue 32 item 3): a kill,
	// a restart, a pause and a resume of validators, and 4 cycles of two
	// rotating full nodes each started from an empty home (a copied home
	// is delivered again, in a volume of a new generation, on the engine
	// it ran on), with the verdicts local gives: every perturbation undone,
	// every cycle caught up, no halt.
	t.Run("faults", func(t *testing.T) {
		out := testenv.OutputDir(t)
		start := time.Now()
		b, err := exec.Command(bin, "run", swarmFaults(t, "10.213.250.0/24", c.Hosts()), "--output", out).CombinedOutput()
		if err != nil {
			t.Fatalf("benchnet run: %v\n%s", err, b)
		}
		dir := onlyRunDirOf(t, out, "swarm-faults")
		f, err := (&rundir.Dir{Path: dir}).ReadFaults()
		if err != nil {
			t.Fatal(err)
		}
		if f.Halted != "" {
			t.Errorf("halted: %s", f.Halted)
		}
		if len(f.Perturbations) != 3 {
			t.Errorf("%d perturbations, want 3 (kill, restart, pause-resume)", len(f.Perturbations))
		}
		// A restarted task may be published on other ports: the harness
		// must see the node again (it did not before the collector and
		// the height poller read the node's endpoint at every use).
		for _, p := range f.Perturbations {
			if !p.Undone {
				t.Errorf("perturbation %d (%s %v) not undone", p.Entry, p.Action, p.Nodes)
			}
			for n, s := range p.BackAtTip {
				if s < 0 {
					t.Errorf("perturbation %d (%s): %s never back at the tip", p.Entry, p.Action, n)
				}
			}
		}
		var caught int
		var catchUp []string
		for _, cy := range f.Cycles {
			if cy.CaughtUpNs > 0 && cy.Error == "" {
				caught++
			} else {
				t.Errorf("cycle %d (%s): not caught up: %s", cy.Cycle, cy.Node, cy.Error)
			}
			catchUp = append(catchUp, fmt.Sprintf("%.1f", cy.CatchUpS))
		}
		if len(f.Cycles) != 4 {
			t.Errorf("%d cycles, want 4", len(f.Cycles))
		}
		t.Logf("faults run on 3 engines: %s; %d of %d cycles caught up, catch-up s %v", time.Since(start).Round(time.Millisecond), caught, len(f.Cycles), catchUp)
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

// placement is where the harness reached each node of a swarm run, as
// node_started recorded it: the address of the swarm node its task ran on.
func placement(t *testing.T, dir string) map[string]string {
	t.Helper()
	d, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := d.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]string{}
	for _, e := range evs {
		if e.Kind != rundir.EventNodeStarted {
			continue
		}
		_, rpc, ok := strings.Cut(e.Detail, "rpc http://")
		host, _, err := net.SplitHostPort(rpc)
		if !ok || err != nil {
			t.Errorf("node_started of %s names no rpc endpoint: %q", e.Node, e.Detail)
			continue
		}
		at[e.Node] = host
	}
	return at
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

// checkMachines asserts that metrics/machines.csv holds want machines,
// each with several rows of a whole machine (CPUs, rising CPU time).
func checkMachines(t *testing.T, dir string, want int) {
	t.Helper()
	rows, _, err := rundir.MachinesCSV.ReadFile(filepath.Join(dir, rundir.MachinesCSV.Name))
	if err != nil {
		t.Fatalf("machines.csv: %v", err)
	}
	by := map[string][]rundir.MachineLoad{}
	for _, r := range rows {
		by[r.Machine] = append(by[r.Machine], r)
	}
	if len(by) != want {
		t.Fatalf("machines.csv has %d machines (%v), want %d", len(by), slices.Sorted(maps.Keys(by)), want)
	}
	for m, rs := range by {
		first, last := rs[0], rs[len(rs)-1]
		if len(rs) < 5 || first.CPUs < 1 || last.CPUTotalSeconds <= first.CPUTotalSeconds || last.Load1 < 0 {
			t.Errorf("machine %s: %d rows, first %+v, last %+v", m, len(rs), first, last)
		}
	}
	t.Logf("machines.csv: %d machines, %d rows", len(by), len(rows))
}
