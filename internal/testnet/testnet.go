// Package testnet brings a resolved plan to life and back down: it builds the
// releases, creates the run directory, generates node homes, asks the runner
// for hosts and processes, and waits until every node makes blocks. It is the
// "up" half of every scenario; load and collectors run on what it returns.
package testnet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	// The built-in runners register themselves with infra.
	_ "github.com/benchnet/benchnet/internal/infra/docker"
	_ "github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Options tune Up.
type Options struct {
	Output       string        // root of run directories
	ReadyTimeout time.Duration // all nodes at ReadyHeight within this
	ReadyHeight  int64
	Log          io.Writer // progress for humans
	// Harness records this process as the run's owner in the state file, so
	// `benchnet down` elsewhere asks it to end the run (SIGTERM) instead of
	// pulling the testnet from under it. Only for a process whose SIGTERM
	// handler tears down (the CLI); a test binary has none.
	Harness bool
	// Driver runs the nodes; default the plan's kind's registered driver
	// (node.New with ReadyHeight and HostExecutable).
	Driver node.Driver
	// HostExecutable is the benchnet binary gossipsub hosts and the
	// accounts app run (default: this process's own executable).
	HostExecutable string
	// LateStarts lets nodes with a start_delay that are not validators join
	// after Up returned (during the load): Up waits only for the others,
	// and their starts keep running, timed from Up's node starts, until
	// Down. Without it (`benchnet up`, experiments) Up waits for every node.
	// Delayed validators are always awaited: the load targets them and the
	// chain may need their votes; so is a node the accounts workload names
	// as its only target (load.target = "full0"). A late joiner counts as
	// running (NotStarted false) once its RPC answers, so the collectors
	// and pollers never see it booting.
	LateStarts bool
}

// DriverFor is the driver of p's node kind: opts.Driver, or the kind's
// registered one (node.New; a binary links the kinds in with
// internal/kinds).
func DriverFor(p *plan.Testnet, opts Options) (node.Driver, error) {
	if opts.Driver != nil {
		return opts.Driver, nil
	}
	return node.New(p.NodeKind(), node.Config{ReadyHeight: opts.ReadyHeight, Executable: opts.HostExecutable})
}

// Testnet is a running testnet.
type Testnet struct {
	Plan   *plan.Testnet
	Dir    *rundir.Dir
	RunID  string
	Runner infra.Runner
	Driver node.Driver

	log     io.Writer
	mu      sync.Mutex
	pids    map[string]int // node name -> node process pid
	downMu  sync.Mutex     // serialises Down
	stopped bool           // Down succeeded
	// unprivileged is whether node processes run as nobody: only when nobody
	// can reach the run directory (a home under a 0700 directory cannot be).
	unprivileged bool
	// reach is the run directory's bind mount node processes use when
	// other users cannot reach the directory itself ("" when they can).
	reachMount string

	// bins and env are what the driver started the nodes with, kept for
	// restarts; absent lists nodes Up did not start (ephemeral nodes
	// started later).
	bins   []node.Binary
	env    node.Env
	absent map[string]bool

	// stopStarts cancels the delayed starts still pending; Down calls it
	// and waits for starts (a start in progress ends before the cleanup).
	stopStarts context.CancelFunc
	starts     sync.WaitGroup

	links linkem.Backend // nil: links not emulated
	model *linkem.Model
	// linksMu serialises ApplyLinks; applied is what the backend last
	// accepted, the state a failed apply rolls back to.
	linksMu     sync.Mutex
	applied     linkem.Conditions
	everApplied bool

	machinesOnce sync.Once
	machines     []infra.MachineMetrics
	machinesErr  error
}

// Up resolves m, prepares everything and starts the testnet. On error it
// tears down what it created, but keeps the run directory for the post-mortem.
// Its stages: prepare (plan, driver, binaries, run directory), host (the
// runner's hosts and network, links, homes), startAll (starts, readiness).
func Up(ctx context.Context, m *manifest.Manifest, opts Options) (_ *Testnet, err error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	if opts.ReadyHeight == 0 {
		opts.ReadyHeight = 2
	}
	t, err := prepare(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	runner, err := newRunner(m, t.RunID, t.Dir.Join(rundir.State), opts)
	if err != nil {
		return nil, err
	}
	t.Runner = runner
	defer func() {
		if err != nil {
			_ = t.releaseReach()
			_ = t.closeLinks()
			fmt.Fprintf(opts.Log, "up failed, tearing down (run directory kept: %s)\n", t.Dir.Path)
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if cerr := t.Runner.Cleanup(cctx); cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
			}
		}
	}()
	start := time.Now()
	notReady, err := t.host(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	start = start.Add(notReady) // links and homes are not part of the time to ready
	waited, err := t.startAll(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Log, "testnet %s ready: %d nodes %s in %s\n", t.Plan.Name, waited, t.Driver.Waiting(), time.Since(start).Round(time.Millisecond))
	_ = t.Dir.Event(rundir.EventTestnetReady, "", "")
	return t, nil
}

// prepare resolves m, finds its driver and binaries, and creates the run
// directory with its inputs: nothing to tear down yet.
func prepare(ctx context.Context, m *manifest.Manifest, opts Options) (*Testnet, error) {
	p, err := plan.Resolve(m)
	if err != nil {
		return nil, err
	}
	drv, err := DriverFor(p, opts)
	if err != nil {
		return nil, err
	}
	bins, err := drv.Binaries(ctx, p, opts.Log)
	if err != nil {
		return nil, err
	}
	dir, err := rundir.Create(opts.Output, p.Name, time.Now())
	if err != nil {
		return nil, err
	}
	t := &Testnet{Plan: p, Dir: dir, RunID: NewRunID(), Driver: drv, log: opts.Log, pids: map[string]int{},
		bins: bins, absent: NotStartedByUp(m, p)}
	fmt.Fprintf(opts.Log, "run %s: %s\n", t.RunID, dir.Path)
	if err := t.writeInputs(m, bins); err != nil {
		return nil, err
	}
	return t, nil
}

// host gives every node its host on the runner and the network joining
// them, the node environment (the run directory, or its bind mount for
// nobody), the emulated links and the homes, generated with the addresses
// the runner gave the nodes. It returns the time that is not part of the
// time to ready: before Setup, and the homes.
func (t *Testnet) host(ctx context.Context, m *manifest.Manifest, opts Options) (time.Duration, error) {
	entered := time.Now()
	// Node processes run as nobody and open their homes, binaries and
	// traces by the paths the driver gives them: the run directory's, or,
	// when other users cannot reach it, its bind mount (reach.go).
	reach := t.Dir
	if blocker := unreachableByOthers(t.Dir.Path); blocker == "" {
		t.unprivileged = true
	} else if mp, err := mountReach(t.Dir.Path, t.RunID); err == nil {
		t.reachMount, t.unprivileged = mp, true
		reach = &rundir.Dir{Path: mp}
		fmt.Fprintf(opts.Log, "note: %s is not searchable by other users: node processes run as nobody and reach the run directory through the bind mount %s (removed by down)\n", blocker, mp)
	} else {
		fmt.Fprintf(opts.Log, "note: %s is not searchable by other users, so node processes run as root, not nobody (%v; use --output under a 0755 path to change that)\n", blocker, err)
	}
	t.env = node.Env{Dir: reach, Homes: reach.Join(rundir.Homes), Unprivileged: t.unprivileged}
	_, taps := t.Runner.(tapUser)
	_, agents := t.Runner.(infra.LinkAgentUser)
	if taps || agents {
		if err := t.openLinks(ctx, t.Runner, m.Infra.Runner); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	before := start.Sub(entered)
	if err := t.Runner.Setup(ctx, t.Plan); err != nil {
		if errors.Is(err, infra.ErrSubnetInUse) {
			// Point at the manifest line, and exit as invalid input.
			return 0, manifest.Errors{m.Errorf("network.subnet", "%v", err)}
		}
		return 0, fmt.Errorf("set up hosts: %w", err)
	}
	_ = t.Dir.Event(rundir.EventNetworkUp, "", fmt.Sprintf("%d hosts in %s", len(t.Plan.Nodes), time.Since(start).Round(time.Millisecond)))
	homesStart := time.Now()
	if err := t.checkAddresses(); err != nil {
		return 0, err
	}
	if err := t.Driver.Homes(ctx, t.Plan, t.bins, t.env); err != nil {
		return 0, fmt.Errorf("generate node homes: %w", err)
	}
	homes := time.Since(homesStart)
	return before + homes, t.applyLinks(ctx)
}

// startAll starts the nodes in start order (delayed ones in goroutines
// timed from here) and waits until those Up waits for are ready; it
// returns how many those are. On failure the delayed starts are cancelled
// and awaited before it returns, so no start can race Up's teardown and
// leave a node behind; on success the late ones (opts.LateStarts) go on
// until Down.
func (t *Testnet) startAll(ctx context.Context, m *manifest.Manifest, opts Options) (_ int, err error) {
	p := t.Plan
	startErr := make(chan error, len(p.Nodes))
	startCtx, stopStarts := context.WithCancel(context.WithoutCancel(ctx))
	t.stopStarts = stopStarts
	defer func() {
		if err != nil {
			t.awaitStarts()
		}
	}()
	wait := map[string]bool{} // the nodes Up waits for
	var late []string
	rotating := maps.Clone(t.absent) // read here while delayed starts change t.absent
	var now []*plan.Node
	for _, n := range startOrder(p.Nodes) {
		if rotating[n.Name] {
			continue
		}
		if n.StartDelay == 0 {
			now = append(now, n)
			wait[n.Name] = true
			continue
		}
		if opts.LateStarts && n.Role != "validator" && !namedLoadTarget(m, n.Name) {
			late = append(late, n.Name)
		} else {
			wait[n.Name] = true
		}
		// Pending until started: readiness checks, the load's node lists
		// and the height poller skip it (NotStarted).
		t.mu.Lock()
		t.absent[n.Name] = true
		t.mu.Unlock()
		t.starts.Add(1)
		go t.delayedStart(startCtx, n, startErr)
	}
	if err := t.startNodes(ctx, now, t.bins, t.env, infra.Caps(m.Infra.Runner).ConcurrentStarts); err != nil {
		return 0, err
	}
	if err := t.waitReady(ctx, opts.ReadyTimeout, wait, startErr); err != nil {
		return 0, err
	}
	if len(late) > 0 {
		fmt.Fprintf(opts.Log, "joining later (start_delay): %s\n", strings.Join(late, ", "))
	} else {
		t.starts.Wait()
	}
	return len(wait), nil
}

// startOrder is the order Up starts nodes in: seeds first, then the plan's
// order. A node that resolves its peers' names when it starts (a swarm's)
// finds the seeds running.
func startOrder(nodes []*plan.Node) []*plan.Node {
	out := make([]*plan.Node, 0, len(nodes))
	for _, n := range nodes {
		if n.Role == "seed" {
			out = append(out, n)
		}
	}
	for _, n := range nodes {
		if n.Role != "seed" {
			out = append(out, n)
		}
	}
	return out
}

// startNodes starts nodes (in start order: seeds first) at most k at a
// time, the seeds all before the others, and returns the first failure
// once the starts in progress ended. With k <= 1 it is one after another.
// It starts no more once a start failed or a started node exited unasked
// (the runner's Exited): at 200 nodes on a swarm that is tens of minutes
// of starts for a testnet that can no longer be ready.
func (t *Testnet) startNodes(ctx context.Context, nodes []*plan.Node, bins []node.Binary, env node.Env, k int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case ex := <-t.Runner.Exited():
			cancel(fmt.Errorf("%s %s exited while the testnet was starting: %s\n%s", ex.Node, ex.Name, ex.Status, t.tail(ex.Node, ex.Name)))
		case <-watchDone:
		}
	}()
	if err := t.startPhases(ctx, cancel, nodes, bins, env, k); err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return err
	}
	return nil
}

// startPhases is startNodes' work; a failed start cancels ctx with its
// error, so no further start begins.
func (t *Testnet) startPhases(ctx context.Context, cancel context.CancelCauseFunc, nodes []*plan.Node, bins []node.Binary, env node.Env, k int) error {
	var seeds, rest []*plan.Node
	for _, n := range nodes {
		if n.Role == "seed" {
			seeds = append(seeds, n)
		} else {
			rest = append(rest, n)
		}
	}
	for i, phase := range [][]*plan.Node{seeds, rest} {
		if i == 1 {
			t.awaitListening(ctx, seeds)
		}
		if k <= 1 {
			for _, n := range phase {
				if err := t.startNode(ctx, n, bins, env); err != nil {
					return err
				}
			}
			continue
		}
		sem := make(chan struct{}, k)
		errs := make([]error, len(phase))
		var wg sync.WaitGroup
		for i, n := range phase {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				break
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if errs[i] = t.startNode(ctx, n, bins, env); errs[i] != nil {
					cancel(errs[i]) // no more starts: the testnet cannot be whole
				}
			}()
		}
		wg.Wait()
		// The failure, not the starts it cut short.
		var first error
		for _, err := range errs {
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return first
		}
	}
	return nil
}

// seedListenWait bounds how long the other nodes wait for a seed's P2P port.
var seedListenWait = 10 * time.Second

// awaitListening waits until every seed accepts TCP connections on its P2P
// address, so that the nodes started next find it on their first dial. A
// node whose first seed dial is refused waits for its next PEX round, 30 s
// later, which on the QA testbed (ready in ~34 s) pushed 3 of ~36 testnets
// past the 60 s ready timeout (2026-11-24, both v0.34.22 and v0.38.17).
// An address the harness cannot dial (a swarm service's DNS name) is not
// waited for; a seed still refusing after seedListenWait is logged, and the
// others start anyway.
func (t *Testnet) awaitListening(ctx context.Context, seeds []*plan.Node) {
	for _, n := range seeds {
		ep, err := t.Runner.Endpoints(n.Name)
		if err != nil || ep.P2P == "" {
			continue
		}
		start := time.Now()
		for {
			var d net.Dialer
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			c, err := d.DialContext(dctx, "tcp", ep.P2P)
			cancel()
			if err == nil {
				c.Close()
				_ = t.Dir.Event(rundir.EventSeedListening, n.Name, time.Since(start).Round(time.Millisecond).String())
				break
			}
			if ctx.Err() != nil || !errors.Is(err, syscall.ECONNREFUSED) {
				break
			}
			if time.Since(start) > seedListenWait {
				fmt.Fprintf(t.log, "seed %s: p2p port %s not listening after %s; starting the other nodes anyway\n", n.Name, ep.P2P, seedListenWait)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// delayedStart starts n after its start_delay unless ctx ends first. A
// failure goes to startErr (read while Up waits) and, once Up returned, to
// the log and the events.
func (t *Testnet) delayedStart(ctx context.Context, n *plan.Node, startErr chan<- error) {
	defer t.starts.Done()
	timer := time.NewTimer(n.StartDelay)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return
	case <-timer.C:
	}
	if testHookDelayedStart != nil {
		testHookDelayedStart(n.Name)
	}
	if err := t.startNode(ctx, n, t.bins, t.env); err != nil {
		if ctx.Err() != nil {
			return // Down or a failed Up cancelled it
		}
		fmt.Fprintf(t.log, "\ndelayed start of %s failed: %v\n", n.Name, err)
		_ = t.Dir.Event(rundir.EventNodeStartFailed, n.Name, err.Error())
		select {
		case startErr <- err:
		default:
		}
		return
	}
	t.awaitAnswer(ctx, n)
	t.mu.Lock()
	delete(t.absent, n.Name)
	t.mu.Unlock()
}

// answerWait bounds how long a delayed start waits for the node's RPC
// before it counts the node as running anyway (its failures then show as
// scrape and poll errors).
var answerWait = 30 * time.Second

// awaitAnswer waits until a node of a kind that keeps a chain (its driver
// is a node.Chain), just started, answers for its height (a node_joined
// event), at most answerWait or until ctx ends.
func (t *Testnet) awaitAnswer(ctx context.Context, n *plan.Node) {
	chain, ok := t.Driver.(node.Chain)
	if !ok {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		h, catchingUp, err := chain.Height(ctx, n)
		if err == nil {
			_ = t.Dir.Event(rundir.EventNodeJoined, n.Name, fmt.Sprintf("RPC answers %s after its start (height %d, catching_up %v)",
				time.Since(start).Round(time.Millisecond), h, catchingUp))
			return
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				fmt.Fprintf(t.log, "\n%s started but its RPC did not answer within %s: %v\n", n.Name, answerWait, err)
			}
			return
		case <-tick.C:
		}
	}
}

// namedLoadTarget is whether m's load names node as its only target (the
// accounts workload's load.target = "<node>"): the load cannot go
// elsewhere, so Up waits for it even when it starts late.
func namedLoadTarget(m *manifest.Manifest, node string) bool {
	return m.Load.Workload == manifest.WorkloadAccounts && m.Load.Target == node
}

// awaitStarts cancels the delayed starts not yet due and waits for those in
// progress.
func (t *Testnet) awaitStarts() {
	if t.stopStarts != nil {
		t.stopStarts()
	}
	t.starts.Wait()
}

// testHookDelayedStart, when set by a test, runs in a delayed start's
// goroutine just before the node is started.
var testHookDelayedStart func(node string)

// writeInputs records what the run is made of: the manifest as given, the
// plan, and the provenance of every binary.
func (t *Testnet) writeInputs(m *manifest.Manifest, bins []node.Binary) error {
	if err := t.Dir.WriteFile(rundir.Manifest, m.Raw); err != nil {
		return err
	}
	if _, err := os.Stat(m.File); err == nil { // not for a built-in manifest
		if abs, err := filepath.Abs(m.File); err == nil {
			if err := t.Dir.WriteFile(rundir.ManifestSource, []byte(abs+"\n")); err != nil {
				return err
			}
		}
	}
	pj, err := t.Plan.JSON()
	if err != nil {
		return err
	}
	if err := t.Dir.WriteFile(rundir.Plan, pj); err != nil {
		return err
	}
	if err := os.MkdirAll(t.Dir.Join("provenance"), 0o755); err != nil {
		return err
	}
	for _, b := range bins {
		prov, err := provenanceOf(t.Plan, b)
		if err != nil {
			return err
		}
		name := b.Release.String() + "-" + b.Program + ".txt"
		if err := t.Dir.WriteFile(filepath.Join("provenance", name), []byte(prov)); err != nil {
			return err
		}
	}
	return nil
}

func (t *Testnet) startNode(ctx context.Context, n *plan.Node, bins []node.Binary, env node.Env) error {
	var pid int
	for _, proc := range t.Driver.Processes(n, bins, env) {
		p, err := t.Runner.Start(ctx, proc)
		if err != nil {
			if proc.Name != "node" {
				return fmt.Errorf("start %s %s: %w", n.Name, proc.Name, err)
			}
			return fmt.Errorf("start %s: %w", n.Name, err)
		}
		if proc.Name == "node" {
			pid = p
		}
	}
	if err := t.reach(n); err != nil {
		return err
	}
	t.mu.Lock()
	t.pids[n.Name] = pid
	t.mu.Unlock()
	detail := fmt.Sprintf("pid %d, %s, rpc %s", pid, n.Release, n.RPCURL())
	if n.StartDelay > 0 {
		detail += ", start_delay " + n.StartDelay.String()
	}
	_ = t.Dir.Event(rundir.EventNodeStarted, n.Name, detail)
	return nil
}

// waitReady polls the nodes in wait until the driver finds all ready (a
// delayed one once it started). On timeout
// the error states the timeout, which nodes were short, and the end of the
// first failing node's log.
func (t *Testnet) waitReady(ctx context.Context, timeout time.Duration, wait map[string]bool, startErr <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	ready := map[string]bool{}
	status := map[string]string{}
	for {
		short := []string{}
		for _, n := range t.Plan.Nodes {
			if ready[n.Name] || !wait[n.Name] {
				continue
			}
			if t.NotStarted(n.Name) { // a delayed start not yet due
				short = append(short, n.Name)
				status[n.Name] = "not started yet (start_delay)"
				continue
			}
			ready[n.Name], status[n.Name] = t.Driver.Ready(ctx, n)
			if !ready[n.Name] {
				short = append(short, n.Name)
			}
		}
		if len(short) == 0 {
			return nil
		}
		select {
		case err := <-startErr:
			return err
		case ex := <-t.Runner.Exited():
			return fmt.Errorf("%s %s exited before the testnet was ready: %s\n%s", ex.Node, ex.Name, ex.Status, t.tail(ex.Node, ex.Name))
		case <-tick.C:
		case <-ctx.Done():
			if parent := context.Cause(ctx); parent != nil && !errors.Is(parent, context.DeadlineExceeded) {
				return parent
			}
			first := short[0]
			return fmt.Errorf("testnet not ready within %s: %d of %d nodes not %s (%s); %s %s\n%s",
				timeout, len(short), len(t.Plan.Nodes), t.Driver.Waiting(), strings.Join(short, ", "), first, status[first], t.tail(first, "node"))
		}
	}
}

// tail returns the last lines of a process's log, for error messages.
func (t *Testnet) tail(node, name string) string {
	path := t.logPath(node, name)
	lines, err := TailLines(path, 15)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return fmt.Sprintf("last lines of %s:\n    %s", path, strings.Join(lines, "\n    "))
}

// logPath is where the driver has a node's process write its log (the
// node's own log, <node>.log, for a process it does not know).
func (t *Testnet) logPath(node, name string) string {
	if n := t.Plan.Node(node); n != nil {
		for _, p := range t.Driver.Processes(n, t.bins, t.env) {
			if p.Name == name && p.LogPath != "" {
				return p.LogPath
			}
		}
	}
	return t.Dir.Join(rundir.Logs, node+".log")
}

// TailLines returns the last n lines of a file.
func TailLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const max = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// unreachableByOthers returns the first directory on the way to path that
// other users cannot search (no o+x), or "" when there is none.
func unreachableByOthers(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	for d := abs; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// Machines are the machines the runner placed the testnet on, where it
// watches them (infra.MachineWatcher); none on a runner of one machine.
// Asked once: every measurement of one testnet scrapes the same exporters.
func (t *Testnet) Machines(ctx context.Context) ([]infra.MachineMetrics, error) {
	w, ok := t.Runner.(infra.MachineWatcher)
	if !ok {
		return nil, nil
	}
	t.machinesOnce.Do(func() { t.machines, t.machinesErr = w.MachineMetrics(ctx) })
	return t.machines, t.machinesErr
}

// PIDs returns the node processes' pids by node name.
func (t *Testnet) PIDs() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.pids)
}

// Check reports why the testnet is no longer whole when its runner can tell
// (state, registration or a namespace removed from elsewhere); nil otherwise.
func (t *Testnet) Check() error {
	if c, ok := t.Runner.(interface{ Check() error }); ok {
		return c.Check()
	}
	return nil
}

// Down stops every process and removes every resource of the run. Once it
// succeeded, calling it again is a no-op; after a failure a later call tries
// again (the runner's cleanup and the link backends' Close are idempotent).
func (t *Testnet) Down(ctx context.Context) error {
	t.downMu.Lock()
	defer t.downMu.Unlock()
	if t.stopped {
		return nil
	}
	// No delayed start may run during or after the cleanup.
	t.awaitStarts()
	err := errors.Join(t.Runner.Cleanup(ctx), t.closeLinks())
	err = errors.Join(err, t.releaseReach()) // after every node process ended
	t.stopped = err == nil
	_ = t.Dir.Event(rundir.EventTestnetDown, "", errString(err))
	return err
}

// releaseReach removes the run directory's bind mount, if Up made one.
func (t *Testnet) releaseReach() error {
	if t.reachMount == "" {
		return nil
	}
	return ReleaseReach(t.RunID)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// NewRunID is a fresh 6-hex-digit run id: it names a run's resources.
func NewRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
