package local

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/infratest"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/testenv"
)

// helperEnv makes the test binary act as a small program inside a node's
// namespace (see TestMain), so the tests need no shell and no extra tools.
const helperEnv = "BENCHNET_LOCAL_TEST_HELPER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); {
	case strings.HasPrefix(mode, "listen="):
		helperListen(strings.TrimPrefix(mode, "listen="))
		return
	case mode == "ignoreterm":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring SIGTERM")
		time.Sleep(time.Hour)
		return
	case mode == "hold":
		helperHold()
		return
	}
	// Keep the tests' registry away from the machine's real one.
	dir, err := os.MkdirTemp("", "benchnet-local-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(proctable.RuntimeDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperListen serves one greeting line per connection on addr.
func helperListen(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(3)
		}
		fmt.Fprintf(c, "hello from %s\n", addr)
		c.Close()
	}
}

// helperHold is a harness that sets up a run, starts a process, says
// "ready" and waits to be killed with -9.
func helperHold() {
	data, err := os.ReadFile(os.Getenv("HOLD_PLAN"))
	if err != nil {
		panic(err)
	}
	p, err := plan.ReadJSON(data)
	if err != nil {
		panic(err)
	}
	r := New(os.Getenv("HOLD_RUNID"), os.Getenv("HOLD_STATE"))
	ctx := context.Background()
	if err := r.Setup(ctx, p); err != nil {
		fmt.Println("setup:", err)
		os.Exit(1)
	}
	for _, n := range p.Nodes {
		if _, err := r.Start(ctx, infra.Process{Node: n.Name, Name: "node", Argv: []string{"sleep", "1000"}, Unprivileged: true}); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	select {}
}

func requireRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t) // network namespaces, veths and a bridge
}

func newRunID(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// testPlan resolves a small inline manifest with count validators on subnet.
func testPlan(t *testing.T, subnet string, count int) *plan.Testnet {
	t.Helper()
	return infratest.Plan(t, "localtest", subnet, count)
}

// setup creates a run and always tears it down after the test.
func setup(t *testing.T, subnet string, count int) (*Runner, *plan.Testnet) {
	t.Helper()
	requireRoot(t)
	p := testPlan(t, subnet, count)
	r := New(newRunID(t), filepath.Join(t.TempDir(), "state.json"))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.Cleanup(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	start := time.Now()
	if err := r.Setup(context.Background(), p); err != nil {
		t.Fatalf("setup: %v", err)
	}
	t.Logf("setup of %d nodes took %s", count, time.Since(start).Round(time.Millisecond))
	return r, p
}

func waitExit(t *testing.T, r *Runner, d time.Duration) infra.Exit {
	t.Helper()
	select {
	case ex := <-r.Exited():
		return ex
	case <-time.After(d):
		t.Fatalf("no exit reported within %s", d)
		return infra.Exit{}
	}
}

func TestSetupConnectivity(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r, p := setup(t, "10.213.241.0/24", 3)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("setup of 3 nodes took %s, want < 2s", d)
	}
	ctx := context.Background()
	logs := t.TempDir()

	// The root namespace (the harness) reaches every node.
	for _, n := range p.Nodes {
		if out, err := exec.Command("ping", "-c1", "-W1", n.Addr.String()).CombinedOutput(); err != nil {
			t.Errorf("ping %s (%s) from the root namespace: %v\n%s", n.Name, n.Addr, err, out)
		}
	}
	// Every node reaches the next one across the bridge.
	want := map[string]bool{}
	for i, n := range p.Nodes {
		peer := p.Nodes[(i+1)%len(p.Nodes)]
		if _, err := r.Start(ctx, infra.Process{
			Node: n.Name, Name: "ping", Argv: []string{"ping", "-c1", "-W1", peer.Addr.String()},
			LogPath: filepath.Join(logs, n.Name+".log"),
		}); err != nil {
			t.Fatal(err)
		}
		want[n.Name] = true
	}
	for range p.Nodes {
		ex := waitExit(t, r, 5*time.Second)
		if ex.Status != "exit status 0" {
			log, _ := os.ReadFile(filepath.Join(logs, ex.Node+".log"))
			t.Errorf("ping from %s: %s\n%s", ex.Node, ex.Status, log)
		}
		delete(want, ex.Node)
	}
	if len(want) > 0 {
		t.Errorf("no exit for %v", want)
	}
	log, err := os.ReadFile(filepath.Join(logs, p.Nodes[0].Name+".log"))
	if err != nil || !strings.Contains(string(log), "1 received") {
		t.Errorf("ping log of %s lacks the ping output: %v\n%s", p.Nodes[0].Name, err, log)
	}

	// A TCP service inside a node answers the harness on the node's address.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n0 := p.Nodes[0]
	addr := netip.AddrPortFrom(n0.Addr, 7000).String()
	if _, err := r.Start(ctx, infra.Process{
		Node: n0.Name, Name: "listener", Argv: []string{self}, Env: []string{helperEnv + "=listen=" + addr},
		LogPath: filepath.Join(logs, "listener.log"),
	}); err != nil {
		t.Fatal(err)
	}
	var line string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		line, _ = bufio.NewReader(c).ReadString('\n')
		c.Close()
		break
	}
	if want := "hello from " + addr + "\n"; line != want {
		log, _ := os.ReadFile(filepath.Join(logs, "listener.log"))
		t.Errorf("dial %s: got %q, want %q\nlistener log: %s", addr, line, want, log)
	}

	// Unprivileged processes run as nobody and own their ChownDirs.
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	idLog := filepath.Join(logs, "id.log")
	if _, err := r.Start(ctx, infra.Process{
		Node: n0.Name, Name: "id", Argv: []string{"id", "-u"}, Dir: home, LogPath: idLog,
		Unprivileged: true, ChownDirs: []string{home},
	}); err != nil {
		t.Fatal(err)
	}
	if ex := waitExit(t, r, 5*time.Second); ex.Name != "id" || ex.Status != "exit status 0" {
		t.Errorf("id: %+v", ex)
	}
	if out, _ := os.ReadFile(idLog); strings.TrimSpace(string(out)) != "65534" {
		t.Errorf("unprivileged process runs as uid %q, want 65534", out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(home, "config", "x"), &st); err != nil || st.Uid != nobodyUID || st.Gid != nobodyGID {
		t.Errorf("ChownDirs: %s owned by %d:%d (err %v), want nobody", home, st.Uid, st.Gid, err)
	}
}

func TestExitedAndStop(t *testing.T) {
	t.Parallel()
	r, p := setup(t, "10.213.242.0/24", 1)
	r.StopTimeout = 300 * time.Millisecond
	ctx := context.Background()
	n := p.Nodes[0].Name
	logs := t.TempDir()
	start := func(name string, argv []string, env ...string) int {
		t.Helper()
		pid, err := r.Start(ctx, infra.Process{Node: n, Name: name, Argv: argv, Env: env, LogPath: filepath.Join(logs, name+".log")})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	inState := func(pid int) bool {
		s, err := readStateFile(r.StatePath)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(s.Doc.Resources, func(x resource) bool { return x.Kind == kindProcess && x.PID == pid })
	}

	// A process that ends by itself is reported with its status and leaves the state file.
	pid := start("false", []string{"false"})
	if ex := waitExit(t, r, 5*time.Second); ex != (infra.Exit{Node: n, Name: "false", PID: pid, Status: "exit status 1"}) {
		t.Errorf("exit of false: %+v", ex)
	}
	time.Sleep(50 * time.Millisecond) // removal happens just before the report
	if inState(pid) {
		t.Errorf("exited pid %d still in the state file", pid)
	}

	// A process killed from outside is reported with the signal.
	pid = start("victim", []string{"sleep", "1000"})
	if !inState(pid) {
		t.Errorf("started pid %d not in the state file when Start returned", pid)
	}
	if got := proctable.NodePIDs(r.StatePath); got != nil && got[n] != 0 {
		t.Errorf("NodePIDs lists a non-node process: %v", got)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if ex := waitExit(t, r, 5*time.Second); ex.Status != "signal: killed" || ex.PID != pid {
		t.Errorf("exit of killed sleep: %+v", ex)
	}

	// Stop of a polite process: no report, gone, forgotten.
	pid = start("node", []string{"sleep", "1000"})
	if got := proctable.NodePIDs(r.StatePath); got[n] != pid {
		t.Errorf("NodePIDs = %v, want %s: %d", got, n, pid)
	}
	if err := r.Stop(ctx, n, "node"); err != nil {
		t.Fatal(err)
	}
	if inState(pid) {
		t.Errorf("stopped pid %d still in the state file", pid)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("stopped pid %d still exists", pid)
	}

	// Stop of a process ignoring SIGTERM: SIGKILL after StopTimeout.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pid = start("stubborn", []string{self}, helperEnv+"=ignoreterm")
	waitLog(t, filepath.Join(logs, "stubborn.log"), "ignoring SIGTERM")
	t0 := time.Now()
	if err := r.Stop(ctx, n, "stubborn"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < r.StopTimeout || d > r.StopTimeout+3*time.Second {
		t.Errorf("stop of a SIGTERM-ignoring process took %s, want just over %s", d, r.StopTimeout)
	}
	if alive(pid, 0) || inState(pid) {
		t.Errorf("stubborn pid %d survived Stop", pid)
	}
	if err := r.Stop(ctx, n, "stubborn"); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := r.Stop(ctx, n, "nosuch"); err == nil {
		t.Error("Stop of an unknown process succeeded")
	}
	select {
	case ex := <-r.Exited():
		t.Errorf("stopped process reported as exited: %+v", ex)
	case <-time.After(200 * time.Millisecond):
	}
}

func waitLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never said %q", path, want)
}

// assertGone checks that nothing of run runID is left on the host.
func assertGone(t *testing.T, runID string, pids []int) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "bn-"+runID+"-") {
		t.Errorf("namespaces left:\n%s", out)
	}
	out, err = exec.Command("ip", "-o", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "bn"+runID) {
		t.Errorf("links left:\n%s", out)
	}
	if out, err := exec.Command("iptables", "-w", "-S", "FORWARD").Output(); err == nil && strings.Contains(string(out), "benchnet:"+runID) {
		t.Errorf("firewall rule left:\n%s", out)
	}
	for _, pid := range pids {
		if state, _, err := procStat(pid); err == nil && state != 'Z' {
			t.Errorf("process %d left (state %c)", pid, state)
		}
	}
	if _, err := os.Stat(filepath.Join(activeDir(), runID)); err == nil {
		t.Errorf("registry entry of %s left", runID)
	}
}

func TestCleanup(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	r, p := setup(t, "10.213.243.0/24", 4)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("setup of 4 nodes took %s, want < 2s", d)
	}
	ctx := context.Background()
	var pids []int
	for _, n := range p.Nodes {
		pid, err := r.Start(ctx, infra.Process{Node: n.Name, Name: "node", Argv: []string{"sleep", "1000"}, Unprivileged: true})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if runs, _ := proctable.ActiveRuns(); !slices.Contains(runs, r.StatePath) {
		t.Errorf("ActiveRuns = %v, want it to contain %s", runs, r.StatePath)
	}
	if err := r.Cleanup(ctx); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	assertGone(t, r.RunID, pids)
	s, err := readStateFile(r.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Doc.Resources) != 0 {
		t.Errorf("state after cleanup still lists %+v", s.Doc.Resources)
	}
	select {
	case ex := <-r.Exited():
		t.Errorf("process stopped by Cleanup reported as exited: %+v", ex)
	default:
	}
	if err := r.Cleanup(ctx); err != nil {
		t.Errorf("second cleanup: %v", err)
	}
	if _, err := r.Start(ctx, infra.Process{Node: p.Nodes[0].Name, Name: "late", Argv: []string{"true"}}); err == nil {
		t.Error("Start after Cleanup succeeded")
	}
}

// killedHarness runs Setup and Start (a `sleep 1000` per node) in a child
// harness and kills it with -9, leaving everything it created behind.
func killedHarness(t *testing.T, subnet string, count int) (runID, statePath string, pids []int) {
	t.Helper()
	requireRoot(t)
	p := testPlan(t, subnet, count)
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.json")
	statePath, runID = filepath.Join(dir, "state.json"), newRunID(t)
	data, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // even if the test fails half-way
		if err := sweep(context.Background(), runID); err != nil {
			t.Errorf("final sweep of %s: %v", runID, err)
		}
	})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), helperEnv+"=hold", "HOLD_PLAN="+planPath, "HOLD_STATE="+statePath, "HOLD_RUNID="+runID)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("child harness: %q", line)
	}
	byNode := proctable.NodePIDs(statePath)
	if len(byNode) != count {
		t.Errorf("NodePIDs = %v, want %d nodes", byNode, count)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	_ = child.Wait()
	for _, pid := range byNode {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			t.Errorf("node process %d died with its harness; the test proves nothing", pid)
		}
		pids = append(pids, pid)
	}
	return runID, statePath, pids
}

// TestDownAfterKill tears a run down from its state file alone, after its
// harness was killed with -9.
func TestDownAfterKill(t *testing.T) {
	t.Parallel()
	runID, statePath, pids := killedHarness(t, "10.213.244.0/24", 2)
	if runs, _ := proctable.ActiveRuns(); !slices.Contains(runs, statePath) {
		t.Errorf("ActiveRuns = %v after kill -9, want it to contain %s", runs, statePath)
	}
	if err := Down(context.Background(), statePath, nil); err != nil {
		t.Fatalf("down: %v", err)
	}
	assertGone(t, runID, pids)
	if runs, _ := proctable.ActiveRuns(); slices.Contains(runs, statePath) {
		t.Errorf("ActiveRuns still lists %s after down", statePath)
	}
	if err := Down(context.Background(), statePath, nil); err != nil {
		t.Errorf("second down: %v", err)
	}
}

// TestSweepWithoutState removes a killed run whose state file is lost, by
// names alone (limited to the test's run id: a real Sweep would also take
// down whatever else runs on this machine).
func TestSweepWithoutState(t *testing.T) {
	t.Parallel()
	runID, statePath, pids := killedHarness(t, "10.213.248.0/24", 2)
	if err := os.Remove(statePath); err != nil {
		t.Fatal(err)
	}
	if err := sweep(context.Background(), runID); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	assertGone(t, runID, pids)
}

func TestOverlappingSubnetRefused(t *testing.T) {
	t.Parallel()
	a, _ := setup(t, "10.213.245.0/24", 1)
	cases := []struct {
		name, subnet string
		want         []string
	}{
		{"another run's bridge", "10.213.245.128/25", []string{"10.213.245.128/25", "10.213.245.1/24", bridgeName(a.RunID)}},
		{"loopback", "127.0.9.0/24", []string{"127.0.9.0/24", "lo"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testPlan(t, "10.213.246.0/24", 1)
			// Move the plan onto the overlapping subnet.
			p.Subnet = netip.MustParsePrefix(c.subnet)
			p.Gateway = p.Subnet.Addr().Next()
			p.Nodes[0].Addr = p.Gateway.Next()
			b := New(newRunID(t), filepath.Join(t.TempDir(), "state.json"))
			err := b.Setup(context.Background(), p)
			if err == nil {
				_ = b.Cleanup(context.Background())
				t.Fatal("setup on an overlapping subnet succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if _, serr := os.Stat(b.StatePath); serr == nil {
				t.Errorf("refused setup wrote a state file")
			}
			if err := b.Cleanup(context.Background()); err != nil {
				t.Errorf("cleanup of a refused setup: %v", err)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live", "state.json")
	if err := os.MkdirAll(filepath.Dir(live), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := newStateFile(live, "abc123").Save(); err != nil {
		t.Fatal(err)
	}
	for id, path := range map[string]string{"abc123": live, "abc124": filepath.Join(dir, "gone", "state.json")} {
		if err := register(id, path); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = unregister("abc123"); _ = unregister("abc124") })
	runs, err := proctable.ActiveRuns()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(runs, live) || slices.Contains(runs, filepath.Join(dir, "gone", "state.json")) {
		t.Errorf("ActiveRuns = %v, want %s and not the stale run", runs, live)
	}
	if _, err := os.Stat(filepath.Join(activeDir(), "abc124")); err == nil {
		t.Error("stale registry entry not dropped")
	}
	if got := proctable.NodePIDs(live); len(got) != 0 {
		t.Errorf("NodePIDs of an empty run = %v", got)
	}
	if got := proctable.NodePIDs(filepath.Join(dir, "missing.json")); got != nil {
		t.Errorf("NodePIDs of a missing state = %v", got)
	}
}

func TestNames(t *testing.T) {
	cases := []struct {
		name        string
		link, netns bool
	}{
		{bridgeName("0a1b2c"), true, false},
		{hostVethName("0a1b2c", 0), true, false},
		{hostVethName("0a1b2c", 199), true, false},
		{netnsName("0a1b2c", "validator0"), false, true},
		{"docker0", false, false},
		{"veth1a2b3c", false, false},
		{"bnABCDEFbr", false, false},
		{"bn0a1b2c", false, false},
		{"bn0a1b2ch", false, false},
		{"bn0a1b2cbr0", false, false},
		{"bn-0a1b2c", false, false},
		{"bn-xyz123-node0", false, false},
		{"eth0", false, false},
	}
	for _, c := range cases {
		if got := isOurLink(c.name); got != c.link {
			t.Errorf("isOurLink(%q) = %v, want %v", c.name, got, c.link)
		}
		if got := isOurNetns(c.name); got != c.netns {
			t.Errorf("isOurNetns(%q) = %v, want %v", c.name, got, c.netns)
		}
	}
	if n := len(hostVethName("ffffff", 9999)); n > 15 {
		t.Errorf("host veth name has %d chars, more than IFNAMSIZ-1", n)
	}
}

func TestParseOurRule(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
	}{
		{`-A FORWARD -i bn0a1b2cbr -o bn0a1b2cbr -m comment --comment "benchnet:0a1b2c" -j ACCEPT`, true},
		{`-A FORWARD -i docker0 -o docker0 -j ACCEPT`, false},
		{`-A FORWARD -i bn0a1b2cbr -o bn0a1b2cbr -m comment --comment "benchnet:0a1b2c" -j DROP`, false},
		{`-A FORWARD -i eth0 -m comment --comment "benchnet:0a1b2c" -j ACCEPT`, false},
		{`-P FORWARD DROP`, false},
	}
	for _, c := range cases {
		rule, ok := parseOurRule(c.line)
		if ok != c.ok {
			t.Errorf("parseOurRule(%q) ok = %v, want %v", c.line, ok, c.ok)
		}
		if ok && !slices.Equal(rule, firewallRule("0a1b2c")) {
			t.Errorf("parseOurRule(%q) = %v", c.line, rule)
		}
	}
}

func TestProcStat(t *testing.T) {
	st, err := startTime(os.Getpid())
	if err != nil || st == 0 {
		t.Fatalf("startTime(self) = %d, %v", st, err)
	}
	if !alive(os.Getpid(), st) {
		t.Error("alive(self) = false")
	}
	if alive(os.Getpid(), st+1) {
		t.Error("alive with a wrong start time = true: a reused pid would be killed")
	}
}

func TestIPBatchRefusesUnsafeArguments(t *testing.T) {
	for _, a := range []string{"", "a b", "a\tb", "x\ny", `"q"`, "it's", "#c", `back\slash`} {
		err := ipBatch(context.Background(), "", []string{"link", "show", a})
		if err == nil || !strings.Contains(err.Error(), "unsafe argument") {
			t.Errorf("ipBatch with argument %q: %v, want an unsafe-argument error", a, err)
		}
	}
}
