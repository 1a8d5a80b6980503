// Package local hosts a testnet on this machine: one network namespace per
// node, each joined by a veth pair to a per-run bridge in the root
// namespace, where the harness has the gateway address and so reaches every
// node directly. Everything is created through iproute2 with argument lists
// and recorded in the run's state file just before it is created, so `down`
// can remove it from the file alone after the harness was killed with -9.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
)

// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const DefaultStopTimeout = 5 * time.Second

// Runner is the local infra.Runner of one run.
type Runner struct {
	RunID     string
	StatePath string
	// StopTimeout is the grace period between SIGTERM and SIGKILL.
	StopTimeout time.Duration
	// Harness records this process in the state file as the run's owner, so
	// `benchnet down` from another terminal asks it to end the run (SIGTERM)
	// before removing what is left. Set it only in a process whose SIGTERM
	// handler tears the run down (the CLI), not in a test binary.
	Harness bool

	attach attachFunc             // how a node's namespace joins the network
	ports  proctable.PortProvider // set by UseTAPs: the link emulator owns the links
	state  *stateFile
	exited chan infra.Exit

	mu       sync.Mutex
	plan     *plan.Testnet
	procs    map[string]*process // by node + "/" + name
	closing  bool                // Cleanup began: exits are expected
	starting sync.WaitGroup      // Starts past the closing check; Cleanup waits for them
}

var _ infra.Runner = (*Runner)(nil)

// process is one started process and its waiter.
type process struct {
	res      resource
	done     chan struct{} // closed when the process was reaped
	stopping bool
}

// New returns a runner for run runID (6 hex digits) that records its
// resources in statePath.
func New(runID, statePath string) *Runner {
	return &Runner{
		RunID: runID, StatePath: statePath, StopTimeout: DefaultStopTimeout,
		attach: attachVeth,
		state:  newStateFile(statePath, runID),
		exited: make(chan infra.Exit, 64),
		procs:  map[string]*process{},
	}
}

// Exited reports processes that ended without Stop or Cleanup asking.
func (r *Runner) Exited() <-chan infra.Exit { return r.exited }

// Setup creates the bridge, then every node's namespace and link. On error
// the partial setup stays recorded; Cleanup (or Down) removes it.
func (r *Runner) Setup(ctx context.Context, p *plan.Testnet) error {
	if err := proctable.ClaimSetup(r.RunID, &r.mu, &r.plan, p); err != nil {
		return err
	}

	for _, n := range p.Nodes {
		if !p.Subnet.Contains(n.Addr) || n.Addr == p.Gateway {
			return fmt.Errorf("node %s: address %s is not a host address of subnet %s", n.Name, n.Addr, p.Subnet)
		}
	}
	if err := checkSubnet(ctx, p.Subnet); err != nil {
		return err
	}
	if r.Harness {
		st, err := startTime(os.Getpid())
		if err != nil {
			return fmt.Errorf("record harness: %w", err)
		}
		r.state.SetHarness(&harness{PID: os.Getpid(), StartTime: st})
	}
	// The state file first, then the registry entry that points at it.
	if err := r.state.Save(); err != nil {
		return err
	}
	if err := register(r.RunID, r.StatePath); err != nil {
		return err
	}

	if bridgeNetfilter() {
		rule := firewallRule(r.RunID)
		if err := r.state.Add(resource{Kind: kindFirewall, Name: firewallComment(r.RunID), Args: rule}); err != nil {
			return err
		}
		if err := addFirewall(ctx, rule); err != nil {
			return err
		}
	}
	br := bridgeName(r.RunID)
	if err := r.state.Add(resource{Kind: kindBridge, Name: br}); err != nil {
		return err
	}
	gw := netip.PrefixFrom(p.Gateway, p.Subnet.Bits()).String()
	if err := ipBatch(ctx, "",
		[]string{"link", "add", "name", br, "type", "bridge"},
		[]string{"addr", "add", gw, "dev", br},
		[]string{"link", "set", br, "up"},
	); err != nil {
		return fmt.Errorf("create bridge: %w", err)
	}
	if r.ports != nil {
		if err := r.attachHarnessTAP(ctx, br); err != nil {
			return err
		}
	}
	nw := network{runID: r.RunID, bridge: br, subnet: p.Subnet}
	for _, n := range p.Nodes {
		ns := netnsName(r.RunID, n.Name)
		if err := r.state.Add(resource{Kind: kindNetns, Name: ns, Node: n.Name}); err != nil {
			return err
		}
		if err := ipCmd(ctx, "netns", "add", ns); err != nil {
			return fmt.Errorf("create host of %s: %w", n.Name, err)
		}
		if err := r.attach(ctx, r.state.Add, nw, n, ns); err != nil {
			return err
		}
	}
	return nil
}

// Start runs proc inside its node's namespace, in its own process group,
// with stdout and stderr appended to proc.LogPath. The process is in the
// state file when Start returns.
func (r *Runner) Start(ctx context.Context, proc infra.Process) (int, error) {
	key := proc.Node + "/" + proc.Name
	r.mu.Lock()
	p := r.plan
	old := r.procs[key]
	closing := r.closing
	if !closing {
		// Cleanup waits for this Start, so a process started while it runs
		// is registered before Cleanup lists what to stop.
		r.starting.Add(1)
		defer r.starting.Done()
	}
	r.mu.Unlock()
	if err := proctable.CheckStart(r.RunID, closing, p, proc); err != nil {
		return 0, err
	}
	if old != nil {
		select {
		case <-old.done:
		default:
			return 0, fmt.Errorf("start %s: already running (pid %d)", key, old.res.PID)
		}
	}
	if proc.Unprivileged {
		for _, d := range proc.ChownDirs {
			if err := chownTree(d); err != nil {
				return 0, fmt.Errorf("start %s: %w", key, err)
			}
		}
	}
	var logf *os.File
	if proc.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(proc.LogPath), 0o755); err != nil {
			return 0, fmt.Errorf("start %s: log: %w", key, err)
		}
		f, err := os.OpenFile(proc.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, fmt.Errorf("start %s: log: %w", key, err)
		}
		defer f.Close() // the child holds its own copy
		logf = f
	}

	// `ip netns exec` execs (no fork), and so does setpriv: the pid we get is
	// the pid of proc.Argv[0] itself.
	args := []string{"netns", "exec", netnsName(r.RunID, proc.Node)}
	if proc.Unprivileged {
		args = append(args, "setpriv", "--reuid="+strconv.Itoa(nobodyUID), "--regid="+strconv.Itoa(nobodyGID), "--clear-groups", "--")
	}
	args = append(args, proc.Argv...)
	// Not CommandContext: ctx bounds starting, not the process's life.
	cmd := exec.Command("ip", args...)
	home := proc.Dir
	if home == "" {
		home = "/"
	}
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, proc.Env...)
	cmd.Dir = proc.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	pid := cmd.Process.Pid
	deprioritize(pid)
	st, err := startTime(pid)
	if err != nil {
		// Gone already (reaped below); a zero start time never matches.
		st = 0
	}
	pr := &process{
		res:  resource{Kind: kindProcess, Name: proc.Name, Node: proc.Node, PID: pid, PGID: pid, StartTime: st},
		done: make(chan struct{}),
	}
	r.mu.Lock()
	r.procs[key] = pr
	r.mu.Unlock()
	recErr := r.state.Update(pr.res)
	go r.wait(cmd, pr)
	if recErr != nil {
		_ = r.stop(context.WithoutCancel(ctx), pr)
		return 0, fmt.Errorf("start %s: record: %w", key, recErr)
	}
	return pid, nil
}

// wait reaps one process, drops it from the state file and reports it on
// Exited unless someone asked it to stop.
func (r *Runner) wait(cmd *exec.Cmd, pr *process) {
	_ = cmd.Wait()
	status := cmd.ProcessState.String()
	_ = r.state.Remove(pr.res)
	r.mu.Lock()
	expected := pr.stopping || r.closing
	r.mu.Unlock()
	close(pr.done)
	proctable.ReportExit(r.exited, infra.Exit{Node: pr.res.Node, Name: pr.res.Name, PID: pr.res.PID, Status: status}, expected)
}

// Stop stops one process: SIGTERM to its group, SIGKILL after StopTimeout.
// Stopping a process that already ended is not an error.
func (r *Runner) Stop(ctx context.Context, node, name string) error {
	r.mu.Lock()
	pr := r.procs[node+"/"+name]
	r.mu.Unlock()
	if pr == nil {
		return fmt.Errorf("stop %s/%s: no such process in run %s", node, name, r.RunID)
	}
	return r.stop(ctx, pr)
}

func (r *Runner) stop(ctx context.Context, pr *process) error {
	r.mu.Lock()
	pr.stopping = true
	r.mu.Unlock()
	select {
	case <-pr.done:
		return nil
	default:
	}
	pg := -pr.res.PGID
	if err := syscall.Kill(pg, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s/%s: %w", pr.res.Node, pr.res.Name, err)
	}
	// A paused (SIGSTOPped) process would only act on SIGTERM once thawed.
	_ = syscall.Kill(pg, syscall.SIGCONT)
	grace := r.StopTimeout
	if grace <= 0 {
		grace = DefaultStopTimeout
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-pr.done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	// Until the leader is reaped its pid (and so the group id) cannot be reused.
	if err := syscall.Kill(pg, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s/%s: %w", pr.res.Node, pr.res.Name, err)
	}
	select {
	case <-pr.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("kill %s/%s (pid %d): not reaped 5s after SIGKILL", pr.res.Node, pr.res.Name, pr.res.PID)
	}
}

// Cleanup stops every process (in parallel) and removes every resource in
// reverse creation order. It carries on past errors and returns them all;
// calling it again is a no-op.
func (r *Runner) Cleanup(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.starting.Wait()
	r.mu.Lock()
	procs := make([]*process, 0, len(r.procs))
	for _, p := range r.procs {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.stop(ctx, p)
		}()
	}
	wg.Wait()
	if !r.state.Exists() {
		return errors.Join(append(errs, unregister(r.RunID))...)
	}
	return errors.Join(append(errs, teardown(ctx, r.state, r.StopTimeout))...)
}

// HarnessGrace is how long Down waits for a live harness to end its run
// after SIGTERM (stop the load, tear down in order) before it removes what is
// left itself.
const HarnessGrace = 90 * time.Second

// Down ends a run from its state file. When the benchnet process that owns
// the run is still alive (a foreground `up` holding the userspace links, a
// `run` under way), Down asks it to end the run (SIGTERM) and waits for it to
// exit, so one process tears down and nothing is left running against a
// dead testnet. Then, or with no live owner (e.g. after a kill -9), it
// removes everything the state file still records: processes first, then
// links, namespaces, the bridge and the firewall rule, then the registry
// entry. Progress goes to log (nil: discarded).
func Down(ctx context.Context, statePath string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	s, err := readStateFile(statePath)
	if err != nil {
		return err
	}
	if h := s.Doc.Harness; h != nil && h.PID != os.Getpid() && alive(h.PID, h.StartTime) {
		fmt.Fprintf(log, "run %s belongs to benchnet pid %d: asking it to end the run\n", s.Doc.RunID, h.PID)
		if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("ask benchnet pid %d to end run %s: %w", h.PID, s.Doc.RunID, err)
		}
		if !waitGone(ctx, h.PID, h.StartTime, HarnessGrace) {
			fmt.Fprintf(log, "benchnet pid %d still running after %s: removing run %s from under it\n", h.PID, HarnessGrace, s.Doc.RunID)
		}
		// The owner rewrote the state file as it removed things.
		if s, err = readStateFile(statePath); err != nil {
			return err
		}
	}
	return teardown(ctx, s, DefaultStopTimeout)
}

// Check reports why the run can no longer be whole: its state file or
// registry entry is gone, or a node's namespace was removed (`benchnet down`
// or a sweep from elsewhere). nil while everything is in place. A harness
// that keeps a testnet alive polls it to notice being taken down.
func (r *Runner) Check() error {
	r.mu.Lock()
	p := r.plan
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("run %s is not set up", r.RunID)
	}
	if !r.state.Exists() {
		return fmt.Errorf("state file %s is gone", r.StatePath)
	}
	runs, err := activeRuns()
	if err != nil {
		return err
	}
	if _, ok := runs[r.RunID]; !ok {
		return fmt.Errorf("run %s is no longer registered as live", r.RunID)
	}
	for _, n := range p.Nodes {
		ns := netnsName(r.RunID, n.Name)
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err != nil {
			return fmt.Errorf("namespace %s of %s is gone", ns, n.Name)
		}
	}
	return nil
}

// netnsDir is where iproute2 pins named network namespaces.
const netnsDir = "/var/run/netns"

// Commands are the host commands the runner execs on this machine: iproute2
// and setpriv always, iptables when bridged frames pass the firewall
// (br_netfilter), where the runner adds an ACCEPT rule for its bridge.
func Commands() []string {
	cmds := []string{"ip", "setpriv"}
	if bridgeNetfilter() {
		cmds = append(cmds, "iptables")
	}
	return cmds
}

// teardown removes the resources of s, newest first, forgetting each one in
// the state file as it goes.
func teardown(ctx context.Context, s *stateFile, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultStopTimeout
	}
	res := s.Snapshot()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for _, x := range res {
		if x.Kind != kindProcess {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := stopRecorded(ctx, x, grace); err != nil {
				fail(err)
				return
			}
			if err := s.Remove(x); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	// Anything still inside one of our namespaces is ours (a process started
	// just before a crash, before it was recorded, or one it forked).
	for _, x := range res {
		if x.Kind == kindNetns && x.Name != "" {
			killNetns(ctx, x.Name)
		}
	}
	for i := len(res) - 1; i >= 0; i-- {
		x := res[i]
		if x.Kind == kindProcess {
			continue
		}
		if err := removeResource(ctx, x); err != nil {
			fail(err)
			continue
		}
		if err := s.Remove(x); err != nil {
			fail(err)
		}
	}
	if len(errs) == 0 {
		if err := unregister(s.Doc.RunID); err != nil {
			fail(err)
		}
	}
	return errors.Join(errs...)
}

// killNetns SIGKILLs every process in namespace ns and waits briefly for
// them to go, so the namespace really disappears.
func killNetns(ctx context.Context, ns string) {
	pids := netnsPIDs(ctx, ns)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		if st, err := startTime(pid); err == nil {
			waitGone(ctx, pid, st, 2*time.Second)
		}
	}
}

func removeResource(ctx context.Context, x resource) error {
	var err error
	switch x.Kind {
	case kindVeth, kindBridge:
		err = ipCmd(ctx, "link", "del", x.Name)
	case kindNetns:
		if x.Name == "" {
			return nil
		}
		err = ipCmd(ctx, "netns", "del", x.Name)
	case kindFirewall:
		err = delFirewall(ctx, x.Args)
	default:
		return fmt.Errorf("remove %s %s: unknown kind", x.Kind, x.Name)
	}
	if gone(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s %s: %w", x.Kind, x.Name, err)
	}
	return nil
}

// Endpoints are the node's plan address and ports: its namespace has the
// plan address and the harness reaches it on the bridge.
func (r *Runner) Endpoints(node string) (statefile.Endpoints, error) {
	r.mu.Lock()
	p := r.plan
	r.mu.Unlock()
	if p == nil || p.Node(node) == nil {
		return statefile.Endpoints{}, fmt.Errorf("endpoints of %s: no such node in run %s", node, r.RunID)
	}
	return infra.PlanEndpoints(p.Node(node)), nil
}
