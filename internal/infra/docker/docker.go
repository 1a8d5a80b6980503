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
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/local"
	"github.com/benchnet/benchnet/internal/plan"
)

// Kind is the runner's name in the registry and in state files.
const Kind = "docker"

// Label marks every object of a run; its value is the run id.
const Label = "benchnet.run"

// DefaultStopTimeout is docker stop's grace before SIGKILL.
const DefaultStopTimeout = 5 * time.Second

func init() {
	infra.Register(Kind, infra.Kind{
		New:  func(c infra.Config) (infra.Runner, error) { return New(c), nil },
		Down: Down,
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
	ports    local.PortProvider // set by UseTAPs: the link emulator owns the links
	tapped   map[string]bool    // nodes whose container got its TAP
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

// ErrSubnetInUse means the engine already has a network overlapping the
// plan's subnet.
var ErrSubnetInUse = errors.New("subnet overlaps a docker network")

// Setup records the run and creates its network with the plan's subnet,
// the gateway (the host's address on it) at the plan's gateway.
func (r *Runner) Setup(ctx context.Context, p *plan.Testnet) error {
	if err := local.ClaimSetup(r.cfg.RunID, &r.mu, &r.plan, p); err != nil {
		return err
	}
	if err := checkAddrs(p); err != nil {
		return err
	}
	if r.cfg.Harness {
		st, err := local.StartTime(os.Getpid())
		if err != nil {
			return fmt.Errorf("record harness: %w", err)
		}
		r.state.SetHarness(&harness{PID: os.Getpid(), StartTime: st})
	}
	if err := r.state.Save(); err != nil {
		return err
	}
	if err := local.Register(r.cfg.RunID, r.cfg.StatePath); err != nil {
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
		"--label", Label+"="+r.cfg.RunID, nw)
	if err != nil {
		if strings.Contains(err.Error(), "overlap") {
			return fmt.Errorf("create network %s: %w: %v", nw, ErrSubnetInUse, err)
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
	if err := local.CheckStart(r.cfg.RunID, closing, p, proc); err != nil {
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
	args := []string{"run", "--name", name, "--label", Label + "=" + r.cfg.RunID,
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
	mounts := append([]string(nil), proc.ChownDirs...)
	if proc.Dir != "" {
		mounts = append(mounts, proc.Dir)
		args = append(args, "--workdir", proc.Dir)
	}
	seen := map[string]bool{}
	for _, d := range mounts {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
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
	st, _ := local.StartTime(pid)
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
	local.ReportExit(r.exited, infra.Exit{Node: c.res.Node, Name: c.res.Name, PID: c.res.PID, Status: status}, expected)
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

// HarnessGrace is how long Down waits for a live harness to end its run.
const HarnessGrace = 90 * time.Second

// Down ends a run from its state file: it asks a live owning harness to end
// it first (SIGTERM), then removes every container, network and volume
// labelled with the run id, whatever the file still records.
func Down(ctx context.Context, statePath string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	s, err := readStateFile(statePath)
	if err != nil {
		return err
	}
	if h := s.Doc.Harness; h != nil && h.PID != os.Getpid() && local.Alive(h.PID, h.StartTime) {
		fmt.Fprintf(log, "run %s belongs to benchnet pid %d: asking it to end the run\n", s.Doc.RunID, h.PID)
		if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("ask benchnet pid %d to end run %s: %w", h.PID, s.Doc.RunID, err)
		}
		if !local.WaitGone(ctx, h.PID, h.StartTime, HarnessGrace) {
			fmt.Fprintf(log, "benchnet pid %d still running after %s: removing run %s from under it\n", h.PID, HarnessGrace, s.Doc.RunID)
		}
		if s, err = readStateFile(statePath); err != nil {
			return err
		}
	}
	return teardown(ctx, s, DefaultStopTimeout)
}

// teardown removes by label (containers, then networks and volumes) and
// then forgets the run.
func teardown(ctx context.Context, s *stateFile, grace time.Duration) error {
	errs := RemoveLabelled(ctx, Label+"="+s.Doc.RunID, grace)
	if err := removeNetnsLinks(s); err != nil {
		errs = errors.Join(errs, err)
	}
	if errs == nil {
		s.Clear()
		if err := s.Save(); err != nil {
			errs = err
		} else if err := local.Unregister(s.Doc.RunID); err != nil {
			errs = err
		}
	}
	return errs
}

// RemoveLabelled removes every container, service, network and volume that
// carries label (KEY=VALUE, or KEY for any value). Containers get grace
// to end on SIGTERM.
func RemoveLabelled(ctx context.Context, label string, grace time.Duration) error {
	var errs []error
	// Services first: their tasks' containers carry the label too, and a
	// container removed under a live service is only replaced or reported.
	if swarmActive(ctx) {
		svcs, err := list(ctx, "service", "ls", "--quiet", "--filter", "label="+label)
		if err != nil {
			errs = append(errs, err)
		}
		if len(svcs) > 0 {
			if _, err := dockerCmd(ctx, append([]string{"service", "rm"}, svcs...)...); err != nil && !noSuch(err) {
				errs = append(errs, fmt.Errorf("remove services: %w", err))
			}
			// The engine stops their tasks asynchronously (SIGTERM, then the
			// stop grace): wait for the containers to go.
			deadline := time.Now().Add(grace + 30*time.Second)
			for time.Now().Before(deadline) {
				left, err := list(ctx, "ps", "--all", "--quiet", "--filter", "label="+label)
				if err != nil || len(left) == 0 {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	ids, err := list(ctx, "ps", "--all", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	nets, err := list(ctx, "network", "ls", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	if len(ids) > 0 {
		if _, err := dockerCmd(ctx, append([]string{"stop", "--time", strconv.Itoa(int(grace.Seconds()))}, ids...)...); err != nil && !noSuch(err) {
			errs = append(errs, fmt.Errorf("stop containers: %w", err))
		}
		// Disconnect before removing: engine 20.10 removing many containers
		// at once was seen to leave a network's endpoint count stale, and
		// then the network cannot be removed until the daemon restarts.
		for _, n := range nets {
			for _, id := range ids {
				_, _ = dockerCmd(ctx, "network", "disconnect", "--force", n, id)
			}
		}
		if _, err := dockerCmd(ctx, append([]string{"rm", "--force", "--volumes"}, ids...)...); err != nil && !noSuch(err) {
			errs = append(errs, fmt.Errorf("remove containers: %w", err))
		}
	}
	for _, n := range nets {
		// A service's tasks can hold an overlay for a moment after rm.
		var err error
		for try := 0; try < 20; try++ {
			if _, err = dockerCmd(ctx, "network", "rm", n); err == nil || noSuch(err) {
				err = nil
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n, err))
		}
	}
	vols, err := list(ctx, "volume", "ls", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	if len(vols) > 0 {
		// A volume stays in use for a moment after its container went.
		var err error
		for try := 0; try < 20; try++ {
			if _, err = dockerCmd(ctx, append([]string{"volume", "rm", "--force"}, vols...)...); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove volumes: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Sweep removes every object any benchnet run labelled, state file or not.
func Sweep(ctx context.Context) error {
	if !Available(ctx) {
		return nil
	}
	return RemoveLabelled(ctx, Label, DefaultStopTimeout)
}

// Available reports whether a Docker engine answers.
func Available(ctx context.Context) bool {
	if _, err := exec.LookPath("docker"); err != nil {
		return false
	}
	_, err := dockerCmd(ctx, "version", "--format", "{{.Server.Version}}")
	return err == nil
}

func swarmActive(ctx context.Context) bool {
	out, err := dockerCmd(ctx, "info", "--format", "{{.Swarm.LocalNodeState}}")
	return err == nil && strings.TrimSpace(string(out)) == "active"
}

func list(ctx context.Context, args ...string) ([]string, error) {
	out, err := dockerCmd(ctx, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// dockerCmd runs the docker CLI with an argument list; the error carries
// its stderr.
func dockerCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("docker %s: %w: %s", strings.Join(args[:min(len(args), 2)], " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func noSuch(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "no such")
}

var tagRe = regexp.MustCompile(`[^a-z0-9._-]+`)

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

// EnsureImage builds (or finds) benchnet/<release>:<binary>-<hash>, FROM
// scratch with binary at its absolute host path and an empty /tmp.
func EnsureImage(ctx context.Context, binary string) (string, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("image of %s: %w", abs, err)
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("image of %s: %w", abs, err)
	}
	if err := checkStatic(abs); err != nil {
		return "", err
	}
	release := tagRe.ReplaceAllString(strings.ToLower(filepath.Base(filepath.Dir(abs))), "-")
	tool := tagRe.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-")
	ref := "benchnet/" + strings.Trim(release, "-._") + ":" + tool + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	if _, err := dockerCmd(ctx, "image", "inspect", "--format", "{{.Id}}", ref); err == nil {
		return ref, nil
	}
	dir, err := os.MkdirTemp("", "benchnet-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	// A hard link when the cache is on the same filesystem, else a copy.
	if err := os.Link(abs, filepath.Join(dir, "bin")); err != nil {
		if err := copyFile(abs, filepath.Join(dir, "bin")); err != nil {
			return "", fmt.Errorf("image of %s: %w", abs, err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o1777); err != nil {
		return "", err
	}
	df := fmt.Sprintf("FROM scratch\nCOPY bin %s\nCOPY tmp /tmp\nLABEL benchnet.image=1\n", jsonString(abs))
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return "", err
	}
	if _, err := dockerCmd(ctx, "build", "--quiet", "--tag", ref, dir); err != nil {
		return "", fmt.Errorf("build image %s: %w", ref, err)
	}
	return ref, nil
}

// jsonString quotes a path for a Dockerfile instruction (its JSON form
// would need the array syntax; a plain path without spaces is enough).
func jsonString(p string) string {
	b, _ := json.Marshal(p)
	return strings.Trim(string(b), `"`)
}

// checkStatic refuses a dynamically linked binary: FROM scratch has no
// loader, and an ELF with an interpreter (PT_INTERP) needs one.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("image of %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: a FROM scratch image needs a static binary (build with CGO_ENABLED=0)", path)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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

// Usage is one node container's resource use as its cgroup reports it.
type Usage struct {
	CPUPercent float64 // of one core, over docker stats' sample
	MemBytes   int64   // cgroup memory usage
}

// NodeStats asks the engine (docker stats, i.e. the containers' cgroups)
// for the CPU and memory of every "node" container of a run, by node.
func NodeStats(ctx context.Context, runID string) (map[string]Usage, error) {
	out, err := dockerCmd(ctx, "ps", "--filter", "label="+Label+"="+runID, "--format", "{{.Names}}")
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
	res := map[string]Usage{}
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
		res[node] = Usage{CPUPercent: cpu, MemBytes: parseSize(f[2])}
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
func StateStats(ctx context.Context, statePath string) (map[string]Usage, error) {
	s, err := readStateFile(statePath)
	if err != nil {
		return nil, err
	}
	return NodeStats(ctx, s.Doc.RunID)
}

// Endpoints are the node's plan address and ports: its container has the
// plan address on the bridge, where the host is the gateway.
func (r *Runner) Endpoints(node string) (infra.Endpoints, error) {
	r.mu.Lock()
	p := r.plan
	r.mu.Unlock()
	if p == nil || p.Node(node) == nil {
		return infra.Endpoints{}, fmt.Errorf("endpoints of %s: no such node in run %s", node, r.cfg.RunID)
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
