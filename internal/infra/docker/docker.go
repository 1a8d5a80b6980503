// Package docker hosts a testnet on the local Docker engine: one container
// per node process on a user-defined bridge network of the plan's subnet.
// Images are built FROM scratch out of our static release binaries (no
// registry is involved), each binary at the same absolute path as on the
// host and each node home bind-mounted at its own path, so a process's argv
// is the same under every runner. Everything carries the label
// benchnet.run=<id>: `down` removes the run by label, which finds what a
// harness killed with -9 never recorded.
//
// The engine's bridge gives the host the gateway address, so the harness
// reaches every node at its plan address, as with the local runner; Docker
// itself lets host-to-container traffic through its FORWARD DROP policy.
package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
)

// Kind is the runner's name in the registry and in state files.
const Kind = "docker"

// DefaultStopTimeout is docker stop's grace before SIGKILL.
const DefaultStopTimeout = 5 * time.Second

func init() {
	infra.Register(Kind, infra.Kind{
		New:      func(c infra.Config) (infra.Runner, error) { return New(c), nil },
		Down:     Down,
		Sweep:    Sweep,
		Usage:    StateStats,
		Commands: Commands,
		// Containers, networks and volumes on the default engine.
		Leftovers: func(ctx context.Context, runID string) ([]string, error) {
			if !dockercli.Default.Available(ctx) {
				return nil, nil
			}
			return dockercli.Default.Labelled(ctx, dockercli.Label+"="+runID)
		},
		// A container's containerd-shim is ~13 MiB beside the node. The
		// userspace switch's TAPs are moved into the containers; netem
		// rules inside containers are not wired yet.
		Caps: caps.Record{Engine: true, Limits: true, NodeOverheadRSS: 13 << 20,
			Links: []string{"userspace"}, Sidecars: true, GossipHosts: true,
			AutoLinks: "userspace", AutoLinksWhy: "runner docker: netem inside containers is not wired yet"},
	})
}

// Runner is the Docker infra.Runner of one run.
type Runner struct {
	cfg         infra.Config
	StopTimeout time.Duration
	state       *stateFile
	exited      chan infra.Exit

	mu       sync.Mutex
	plan     *plan.Testnet
	procs    map[string]*container // by node/name
	hosts    map[string]string     // node -> container that owns its network namespace
	images   map[string]string     // binary path -> image reference
	closing  bool
	starting sync.WaitGroup
	ports    proctable.PortProvider // set by UseTAPs: the link emulator owns the links
	tapped   map[string]bool        // nodes whose container got its TAP
}

var _ infra.Runner = (*Runner)(nil)

type container struct {
	name     string
	res      resource
	done     chan struct{}
	stopping bool
}

// New returns a Docker runner for one run.
func New(c infra.Config) *Runner {
	return &Runner{
		cfg: c, StopTimeout: DefaultStopTimeout,
		state:  newStateFile(c.StatePath, c.RunID),
		exited: make(chan infra.Exit, 64),
		procs:  map[string]*container{}, hosts: map[string]string{}, images: map[string]string{},
		tapped: map[string]bool{},
	}
}

// Exited reports node processes (containers) that ended unasked.
func (r *Runner) Exited() <-chan infra.Exit { return r.exited }

// NetworkName is the run's bridge network.
func NetworkName(runID string) string { return "benchnet-" + runID }

// ContainerName names the container of one process of a node.
func ContainerName(runID, node, name string) string {
	return "benchnet-" + runID + "-" + node + "-" + name
}

// Setup records the run and creates its network with the plan's subnet,
// the gateway (the host's address on it) at the plan's gateway.
func (r *Runner) Setup(ctx context.Context, p *plan.Testnet) error {
	if err := proctable.ClaimSetup(r.cfg.RunID, &r.mu, &r.plan, p); err != nil {
		return err
	}
	if err := checkAddrs(p); err != nil {
		return err
	}
	if r.cfg.Harness {
		st, err := proctable.StartTime(os.Getpid())
		if err != nil {
			return fmt.Errorf("record harness: %w", err)
		}
		r.state.SetHarness(&harness{PID: os.Getpid(), StartTime: st})
	}
	if err := r.state.Save(); err != nil {
		return err
	}
	if err := proctable.Register(r.cfg.RunID, r.cfg.StatePath); err != nil {
		return err
	}
	if r.ports != nil {
		// The emulator's TAPs are the nodes' only links: a docker network
		// of the same subnet would take the gateway address.
		return r.attachHarnessTAP(ctx)
	}
	nw := NetworkName(r.cfg.RunID)
	if err := r.state.Add(resource{Kind: kindNetwork, Name: nw}); err != nil {
		return err
	}
	_, err := dockerCmd(ctx, "network", "create", "--driver", "bridge",
		"--subnet", p.Subnet.String(), "--gateway", p.Gateway.String(),
		"--label", dockercli.Label+"="+r.cfg.RunID, nw)
	if err != nil {
		if strings.Contains(err.Error(), "overlap") {
			return fmt.Errorf("create network %s: %w (a docker network overlaps it): %v", nw, infra.ErrSubnetInUse, err)
		}
		return fmt.Errorf("create network %s: %w", nw, err)
	}
	return nil
}

// Start runs proc in a container of its own. The first process of a node
// gets the node's address; later ones (the socket app's node) join its
// network namespace, so they talk over 127.0.0.1 as on the local runner.
// The attached `docker run` client is kept as a child: it copies the
// container's output to proc.LogPath and its exit is the process's exit.
func (r *Runner) Start(ctx context.Context, proc infra.Process) (int, error) {
	key := proc.Node + "/" + proc.Name
	r.mu.Lock()
	p := r.plan
	old := r.procs[key]
	closing := r.closing
	host := r.hosts[proc.Node]
	ports, tapped := r.ports, r.tapped[proc.Node]
	if !closing {
		r.starting.Add(1)
		defer r.starting.Done()
	}
	r.mu.Unlock()
	if err := proctable.CheckStart(r.cfg.RunID, closing, p, proc); err != nil {
		return 0, err
	}
	if old != nil {
		select {
		case <-old.done:
			// A restart: the old container is gone from docker's point of
			// view only once removed.
			_, _ = dockerCmd(ctx, "rm", "-f", old.name)
		default:
			return 0, fmt.Errorf("start %s: already running (pid %d)", key, old.res.PID)
		}
	}
	image, err := r.image(ctx, proc.Argv[0])
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	name := ContainerName(r.cfg.RunID, proc.Node, proc.Name)
	args := []string{"run", "--name", name, "--label", dockercli.Label + "=" + r.cfg.RunID,
		"--label", "benchnet.node=" + proc.Node, "--attach", "stdout", "--attach", "stderr",
		"--stop-timeout", strconv.Itoa(int(r.grace().Seconds())),
		"--entrypoint", proc.Argv[0]}
	owner := host == "" || host == name // the process owns the node's namespace
	switch {
	case owner && ports != nil && tapped:
		// Its TAP went with the old container's namespace, and the
		// switch has one port per node.
		return 0, fmt.Errorf("start %s: restarting a node with emulated links is not supported by runner docker yet", key)
	case owner && ports != nil:
		args = append(args, "--hostname", proc.Node, "--network", "none")
	case owner:
		args = append(args, "--hostname", proc.Node, "--network", NetworkName(r.cfg.RunID), "--ip", p.Node(proc.Node).Addr.String())
	default:
		// The engine refuses a hostname on a borrowed network namespace.
		args = append(args, "--network", "container:"+host)
	}
	if r.cfg.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(r.cfg.CPUs, 'f', -1, 64))
	}
	if r.cfg.MemoryBytes > 0 {
		args = append(args, "--memory", strconv.FormatInt(r.cfg.MemoryBytes, 10))
	}
	if proc.Dir != "" {
		args = append(args, "--workdir", proc.Dir)
	}
	for _, d := range proc.Mounts() {
		abs, err := filepath.Abs(d)
		if err != nil {
			return 0, fmt.Errorf("start %s: %w", key, err)
		}
		args = append(args, "--mount", "type=bind,source="+abs+",target="+abs)
	}
	home := proc.Dir
	if home == "" {
		home = "/"
	}
	for _, e := range append([]string{"HOME=" + home}, proc.Env...) {
		args = append(args, "--env", e)
	}
	args = append(args, image)
	args = append(args, proc.Argv[1:]...)

	var logf *os.File
	if proc.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(proc.LogPath), 0o755); err != nil {
			return 0, fmt.Errorf("start %s: log: %w", key, err)
		}
		f, err := os.OpenFile(proc.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, fmt.Errorf("start %s: log: %w", key, err)
		}
		defer f.Close()
		logf = f
	}
	// Recorded before it exists: a crash in between leaves a record of a
	// container that may not exist, never a container without a record
	// (and the label finds it anyway).
	c := &container{name: name, done: make(chan struct{}),
		res: resource{Kind: kindContainer, Name: proc.Name, Node: proc.Node, Container: name}}
	if err := r.state.Update(c.res); err != nil {
		return 0, fmt.Errorf("start %s: record: %w", key, err)
	}
	cmd := exec.Command("docker", args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: Ctrl-C of the harness must not reach the
	// client, the harness stops containers itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	r.mu.Lock()
	r.procs[key] = c
	if host == "" {
		r.hosts[proc.Node] = name
	}
	r.mu.Unlock()
	go r.wait(cmd, c)
	pid, err := waitRunning(ctx, name, c.done)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	if owner && ports != nil {
		r.mu.Lock()
		r.tapped[proc.Node] = true
		r.mu.Unlock()
		if err := r.attachTAP(ctx, proc.Node, pid); err != nil {
			return 0, fmt.Errorf("start %s: %w", key, err)
		}
	}
	st, _ := proctable.StartTime(pid)
	c.res.PID, c.res.StartTime = pid, st
	// Under the local runner's kind for processes, so status and the
	// collectors find the node's host pid the same way.
	if err := r.state.Add(resource{Kind: kindProcess, Name: proc.Name, Node: proc.Node, PID: pid, StartTime: st}); err != nil {
		return 0, fmt.Errorf("start %s: record: %w", key, err)
	}
	return pid, nil
}

func (r *Runner) grace() time.Duration {
	if r.StopTimeout <= 0 {
		return DefaultStopTimeout
	}
	return r.StopTimeout
}

// waitRunning polls the engine until the container runs and returns its
// main process's host pid.
func waitRunning(ctx context.Context, name string, done <-chan struct{}) (int, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := dockerCmd(ctx, "inspect", "--format", "{{.State.Running}} {{.State.Pid}}", name)
		if err == nil {
			f := strings.Fields(string(out))
			if len(f) == 2 && f[0] == "true" {
				if pid, err := strconv.Atoi(f[1]); err == nil && pid > 0 {
					return pid, nil
				}
			}
		}
		select {
		case <-done:
			return 0, fmt.Errorf("container %s ended while starting", name)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("container %s not running after 60s", name)
		}
	}
}

func (r *Runner) wait(cmd *exec.Cmd, c *container) {
	_ = cmd.Wait()
	status := cmd.ProcessState.String()
	r.mu.Lock()
	expected := c.stopping || r.closing
	r.mu.Unlock()
	close(c.done)
	proctable.ReportExit(r.exited, infra.Exit{Node: c.res.Node, Name: c.res.Name, PID: c.res.PID, Status: status}, expected)
}

// Stop stops one process's container (docker stop: SIGTERM, SIGKILL after
// the grace) and removes it.
func (r *Runner) Stop(ctx context.Context, node, name string) error {
	r.mu.Lock()
	c := r.procs[node+"/"+name]
	if c != nil {
		c.stopping = true
	}
	r.mu.Unlock()
	if c == nil {
		return fmt.Errorf("stop %s/%s: no such process in run %s", node, name, r.cfg.RunID)
	}
	if _, err := dockerCmd(ctx, "stop", "--time", strconv.Itoa(int(r.grace().Seconds())), c.name); err != nil && !noSuch(err) {
		return fmt.Errorf("stop %s/%s: %w", node, name, err)
	}
	return r.remove(ctx, c, node, name)
}

// remove waits (up to 10 s) for a stopped or killed container's client to
// end, removes the container and drops it from the state file.
func (r *Runner) remove(ctx context.Context, c *container, node, name string) error {
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
	if _, err := dockerCmd(ctx, "rm", "-f", c.name); err != nil && !noSuch(err) {
		return fmt.Errorf("remove container of %s/%s: %w", node, name, err)
	}
	_ = r.state.RemoveNode(node, name)
	return nil
}

// Cleanup removes every container and the network of the run; idempotent.
func (r *Runner) Cleanup(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.starting.Wait()
	return teardown(ctx, r.state, r.grace())
}

// Check reports why the run is no longer whole: its state file is gone, or
// its network was removed (a down from elsewhere).
func (r *Runner) Check() error {
	if !r.state.Exists() {
		return fmt.Errorf("state file %s is gone", r.cfg.StatePath)
	}
	if r.ports != nil {
		return nil // no docker network: the links are the emulator's
	}
	if _, err := dockerCmd(context.Background(), "network", "inspect", "--format", "{{.Name}}", NetworkName(r.cfg.RunID)); err != nil {
		return fmt.Errorf("network %s is gone", NetworkName(r.cfg.RunID))
	}
	return nil
}

// teardown removes by label (containers, then networks and volumes), then
// the netns links, and then forgets the run.
func teardown(ctx context.Context, s *stateFile, grace time.Duration) error {
	return dockercli.Teardown(ctx, s, grace, removeNetnsLinks)
}

// RemoveLabelled removes every container, service, network and volume of
// the default engine that carries label (KEY=VALUE, or KEY for any value).
func RemoveLabelled(ctx context.Context, label string, grace time.Duration) error {
	return dockercli.Default.RemoveLabelled(ctx, label, grace)
}

// Sweep removes every object any benchnet run labelled, state file or not.
func Sweep(ctx context.Context) error {
	if !Available(ctx) {
		return nil
	}
	return RemoveLabelled(ctx, dockercli.Label, DefaultStopTimeout)
}

// Available reports whether a Docker engine answers.
func Available(ctx context.Context) bool { return dockercli.Default.Available(ctx) }

func swarmActive(ctx context.Context) bool { return dockercli.Default.SwarmActive(ctx) }

func list(ctx context.Context, args ...string) ([]string, error) {
	out, err := dockerCmd(ctx, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// dockerCmd runs the docker CLI against the default engine (dockercli).
func dockerCmd(ctx context.Context, args ...string) ([]byte, error) {
	return dockercli.Cmd(ctx, args...)
}

func noSuch(err error) bool { return dockercli.NoSuch(err) }

// EnsureImage builds (or finds) the FROM scratch image of binary (see dockercli).
func EnsureImage(ctx context.Context, binary string) (string, error) {
	return dockercli.EnsureImage(ctx, binary)
}

// Down ends a run from its state file: it asks a live owning harness to end
// it first (SIGTERM), then removes every container, network and volume
// labelled with the run id, whatever the file still records.
func Down(ctx context.Context, statePath string, log io.Writer) error {
	return dockercli.Down(ctx, statePath, log, dockercli.HarnessGrace, func(ctx context.Context, s *stateFile) error {
		return teardown(ctx, s, DefaultStopTimeout)
	})
}

// image returns the image that holds binary at its own path, building it
// FROM scratch the first time (the engine keeps it: the tag is the binary's
// content hash, so a rebuilt release gets a new image).
func (r *Runner) image(ctx context.Context, binary string) (string, error) {
	r.mu.Lock()
	ref, ok := r.images[binary]
	r.mu.Unlock()
	if ok {
		return ref, nil
	}
	ref, err := EnsureImage(ctx, binary)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.images[binary] = ref
	r.mu.Unlock()
	return ref, nil
}

// Commands are the host commands the runner execs.
func Commands() []string { return []string{"docker"} }

// checkAddrs: every node must be a host address of the subnet.
func checkAddrs(p *plan.Testnet) error {
	for _, n := range p.Nodes {
		if !p.Subnet.Contains(n.Addr) || n.Addr == p.Gateway {
			return fmt.Errorf("node %s: address %s is not a host address of subnet %s", n.Name, n.Addr, p.Subnet)
		}
	}
	return nil
}

// NodeStats asks the engine (docker stats, i.e. the containers' cgroups)
// for the CPU and memory of every "node" container of a run, by node.
func NodeStats(ctx context.Context, runID string) (map[string]infra.Usage, error) {
	out, err := dockerCmd(ctx, "ps", "--filter", "label="+dockercli.Label+"="+runID, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	prefix := "benchnet-" + runID + "-"
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, "-node") {
			names = append(names, n)
		}
	}
	res := map[string]infra.Usage{}
	if len(names) == 0 {
		return res, nil
	}
	out, err = dockerCmd(ctx, append([]string{"stats", "--no-stream", "--format", "{{.Name}} {{.CPUPerc}} {{.MemUsage}}"}, names...)...)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line) // name 1.23% 38.5MiB / 1GiB
		if len(f) < 3 {
			continue
		}
		node := strings.TrimSuffix(strings.TrimPrefix(f[0], prefix), "-node")
		cpu, _ := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		res[node] = infra.Usage{CPUPercent: cpu, MemBytes: parseSize(f[2])}
	}
	return res, nil
}

// parseSize reads docker's human sizes ("38.5MiB", "1.2GiB", "512KiB", "10B").
func parseSize(s string) int64 {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0
			}
			return int64(f * u.mult)
		}
	}
	return 0
}

// StateStats is NodeStats of the run a state file records.
func StateStats(ctx context.Context, statePath string) (map[string]infra.Usage, error) {
	s, err := readStateFile(statePath)
	if err != nil {
		return nil, err
	}
	return NodeStats(ctx, s.Doc.RunID)
}

// Endpoints are the node's plan address and ports: its container has the
// plan address on the bridge, where the host is the gateway.
func (r *Runner) Endpoints(node string) (statefile.Endpoints, error) {
	r.mu.Lock()
	p := r.plan
	r.mu.Unlock()
	if p == nil || p.Node(node) == nil {
		return statefile.Endpoints{}, fmt.Errorf("endpoints of %s: no such node in run %s", node, r.cfg.RunID)
	}
	return infra.PlanEndpoints(p.Node(node)), nil
}

// Cmd runs the docker CLI with an argument list (never a shell); the error
// carries its stderr. For the swarm runner, which drives the same engine.
func Cmd(ctx context.Context, args ...string) ([]byte, error) { return dockerCmd(ctx, args...) }

// NoSuch reports an engine error about an object that does not exist.
func NoSuch(err error) bool { return noSuch(err) }

// SwarmActive reports whether the engine is a node of an active swarm.
func SwarmActive(ctx context.Context) bool { return swarmActive(ctx) }
