// Package infratest is the suite every runner passes at the infra.Runner
// interface, in litestream's RunWithReplicaClient shape: one body drives a
// runner through Setup, Pause and Resume, an unasked exit, Stop, a restart
// under the same name, Kill, Endpoints and Cleanup with a trivial helper
// process (./helper, built static), and asserts that the runner's own
// declared Leftovers (infra.Leftovers) are empty once Cleanup returned.
// The conformance suite (cmd/benchnet) is the end-to-end layer above it,
// with real CometBFT nodes.
package infratest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/testenv"
)

// Helper builds the helper program, static (CGO_ENABLED=0), into a
// temporary directory and returns its path.
func Helper(t *testing.T) string {
	t.Helper()
	gobin := testenv.NeedCommand(t, "go", "golang-go")
	out := filepath.Join(t.TempDir(), "helper")
	cmd := exec.Command(gobin, "build", "-o", out, "github.com/benchnet/benchnet/internal/infra/infratest/helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the helper: %v\n%s", err, b)
	}
	return out
}

// Plan resolves a testnet called name of count validators on subnet (a
// /24 no other test uses), for the default runner.
func Plan(t *testing.T, name, subnet string, count int) *plan.Testnet {
	t.Helper()
	return PlanFor(t, "", name, subnet, count)
}

// PlanFor is Plan resolved for runner ("": the default), as the testnet
// resolves it: with what the runner's capabilities record decides.
func PlanFor(t *testing.T, runner, name, subnet string, count int) *plan.Testnet {
	t.Helper()
	src := fmt.Sprintf("name = %q\n[network]\nsubnet = %q\n[node.validator]\ncount = %d\nrelease = \"cometbft@v1.0.1\"\n", name, subnet, count)
	if runner != "" {
		src += fmt.Sprintf("[infra]\nrunner = %q\n", runner)
	}
	m, err := manifest.Parse("suite.toml", []byte(src))
	if err != nil {
		t.Fatalf("parse manifest: %v", err)
	}
	p, err := plan.Resolve(m)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	return p
}

// Run drives the runner called name through its interface. subnet is the
// testnet's /24, free on this machine and its engines.
func Run(t *testing.T, name, subnet string) {
	testenv.NeedRoot(t)
	helper := Helper(t)
	p := PlanFor(t, name, "suite-"+name, subnet, 2)
	id := make([]byte, 3)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	runID := hex.EncodeToString(id)
	r, err := infra.New(name, infra.Config{RunID: runID, StatePath: filepath.Join(t.TempDir(), "state.json"), Harness: true})
	if err != nil {
		t.Fatalf("new %s runner: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cleaned := false
	t.Cleanup(func() {
		if !cleaned {
			cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
			defer ccancel()
			_ = r.Cleanup(cctx)
		}
	})
	if err := r.Setup(ctx, p); err != nil {
		t.Fatalf("setup: %v", err)
	}
	node, other := p.Nodes[0].Name, p.Nodes[1].Name
	logs := t.TempDir()
	logOf := func(proc string) string { return filepath.Join(logs, proc+".log") }
	startOn := func(on, proc string, args ...string) {
		t.Helper()
		if _, err := r.Start(ctx, infra.Process{Node: on, Name: proc, Argv: append([]string{helper}, args...), LogPath: logOf(on + "-" + proc)}); err != nil {
			log, _ := os.ReadFile(logOf(on + "-" + proc))
			t.Fatalf("start %s: %v\nits log:\n%s", proc, err, log)
		}
	}
	start := func(proc string, args ...string) {
		t.Helper()
		startOn(node, proc, args...)
	}
	size := func(proc string) int64 {
		fi, err := os.Stat(logOf(node + "-" + proc))
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	grows := func(proc string, within time.Duration) bool {
		from := size(proc)
		for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if size(proc) > from {
				return true
			}
		}
		return false
	}
	// still: the log does not grow over a second, once what was in
	// flight when the call returned has landed.
	still := func(proc string) bool {
		time.Sleep(200 * time.Millisecond)
		return !grows(proc, time.Second)
	}
	noExit := func(what string) {
		t.Helper()
		select {
		case ex := <-r.Exited():
			t.Errorf("%s: reported as an unasked exit: %+v", what, ex)
		case <-time.After(time.Second):
		}
	}

	ticking := func() {
		t.Helper()
		start("node", "tick")
		if !grows("node", 30*time.Second) {
			t.Fatal("the ticking helper wrote nothing to its log")
		}
	}

	// The node's process is frozen by Pause and thawed by Resume. Its
	// name is "node": a runner without sidecars runs that one only.
	ticking()
	if err := r.Pause(ctx, node, "node"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if !still("node") {
		t.Error("a paused process still writes")
	}
	if err := r.Resume(ctx, node, "node"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !grows("node", 10*time.Second) {
		t.Error("a resumed process does not write")
	}

	// A process that ends by itself is reported, with its status: the
	// other node's (a runner may run one process per node, and restart a
	// node with the command it started it with). It runs for a while
	// first: one that dies while starting is a failed Start on a runner
	// that waits for its task to run (swarm), not an unasked exit.
	startOn(other, "node", "exit", "3", "3s")
	select {
	case ex := <-r.Exited():
		if ex.Node != other || ex.Name != "node" || !strings.Contains(ex.Status, "3") {
			t.Errorf("exit reported as %+v, want node %s, process node, status 3", ex, other)
		}
	case <-time.After(time.Minute):
		t.Fatal("a process that exited with status 3 was not reported within a minute")
	}

	// Stop ends the node's process, and that is no unasked exit.
	if err := r.Stop(ctx, node, "node"); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !still("node") {
		t.Error("a stopped process still writes")
	}
	noExit("a stopped process")

	// It starts again under the same name; Kill ends it, as a crash would.
	ticking()
	if err := r.Kill(ctx, node, "node"); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if !still("node") {
		t.Error("a killed process still writes")
	}
	noExit("a killed process")

	// Peers dial a node where the plan says (the plan is never rewritten
	// after Setup: testnet.checkAddresses stops a run that disagrees).
	if ep, err := r.Endpoints(node); err != nil || ep.P2P != p.Node(node).P2PAddr() {
		t.Errorf("endpoints of %s: %+v, %v; want its p2p address %s, the plan's", node, ep, err, p.Node(node).P2PAddr())
	}
	if _, err := r.Endpoints("no-such-node"); err == nil {
		t.Error("endpoints of a node the plan lacks: no error")
	}

	// Cleanup removes everything, twice without complaint, and the
	// runner's own leftovers check finds nothing of the run.
	if err := r.Cleanup(ctx); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	cleaned = true
	if err := r.Cleanup(ctx); err != nil {
		t.Errorf("a second cleanup: %v", err)
	}
	left, err := infra.Leftovers(ctx, runID)
	if err != nil {
		t.Errorf("leftovers: %v", err)
	}
	if len(left) > 0 {
		t.Errorf("after cleanup, run %s left %s", runID, strings.Join(left, ", "))
	}
}
