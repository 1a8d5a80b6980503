// Package swarm hosts a testnet as Docker Swarm services: one service per
// node on an attachable overlay network of the plan's subnet, from the same
// FROM-scratch images as the docker runner (no registry: on a multi-host
// swarm the images are loaded on every machine first, docs/swarm.md).
//
// A service cannot be given a fixed address, so addresses come from the
// runner: peers dial a node by its network alias, the node's name, which
// the overlay's DNS resolves to the node's task (endpoint mode dnsrr: no
// virtual IP, which would need IPVS in the kernel, and this machine's has
// none). CometBFT resolves its peers' names once, when it starts, so nodes
// start one after another, each once the earlier ones run: a node dials
// the peers that run before it, later ones dial it. The harness cannot
// reach the overlay from the host: each node's RPC and Prometheus ports
// are published in host mode on ports the engine picks, on whichever
// machine runs the task, and Endpoints reports those. Setup creates every
// service without a replica; Start gives it its command and one replica.
// Everything carries benchnet.run=<id>; `down` removes by label.
package swarm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
)

// Kind is the runner's name in the registry and in state files.
const Kind = "swarm"

// ZoneLabel is the swarm node label a manifest zone is placed by.
const ZoneLabel = "benchnet.zone"

// StackFile is the stack file written beside state.json.
const StackFile = "stack.yml"

const (
	kindNetwork = "network"
	kindService = "service"
	// placeholder is the image of a service before Start: with no replica
	// nothing pulls or runs it.
	placeholder = "benchnet/placeholder:none"
	stopGrace   = 5 * time.Second
)

func init() {
	infra.Register(Kind, infra.Kind{
		New:  func(c infra.Config) (infra.Runner, error) { return New(c), nil },
		Down: Down,
		// The docker runner's Sweep removes every benchnet-labelled service too.
		// A task's host-mode ports add four docker-proxy processes (IPv4
		// and IPv6 for RPC and metrics, ~13 MiB) to the container's shim;
		// scheduling a task takes about a second. A service's namespace is
		// on another machine's engine: links are emulated by an NFQUEUE
		// agent the node's task runs it under (linkem "agent"); no
		// second process beside the node otherwise. Gossipsub hosts listen on every address
		// and dial their peers by name (a service's virtual IP is not
		// theirs); their traces come back from the task's engine. A
		// testnet costs ~45 s more than on local: an A/A quick QA on the
		// 3-engine swarm of one machine (2026-11-30) took 66 s per search
		// probe, 84 s per pair run and 79 s per steady run where the
		// local model plans 21, 31 and 36.
		Machines:  Machines,
		Leftovers: Leftovers,
		Caps: caps.Record{ConcurrentStarts: 16, Engine: true, Engines: true, Limits: true,
			NodeOverheadRSS: 26 << 20, StartPerNode: 1, TestnetS: 45, Placement: ZoneLabel, PeersByName: true, GossipHosts: true,
			Links: []string{"agent"}, AutoLinks: "agent", AutoLinksWhy: "runner swarm: each node's egress through an NFQUEUE agent in its task (no process owns every link)"},
	})
}

// Runner is the swarm infra.Runner of one run.
type Runner struct {
	cfg    infra.Config
	state  *statefile.File
	exited chan infra.Exit

	mu      sync.Mutex
	plan    *plan.Testnet
	self    string // this engine's swarm node id
	nodes   map[string]*service
	addrs   map[string]string           // swarm node id -> address the harness dials
	places  map[string][]string         // node -> placement constraints
	engines map[string]dockercli.Engine // swarm node id -> its engine
	elig    map[string][]string         // node -> swarm node ids that may run it
	images  imageCopies
	// copyHomes: some engine that may run a node is not this machine's,
	// so homes are copied into a volume on each such engine rather than
	// bound from the run directory (which would need NFS).
	copyHomes bool
	stackMu   sync.Mutex // one writeStack at a time (concurrent starts)
	// exporterErr: the machine exporters could not be started (Setup
	// goes on without them; MachineMetrics reports it).
	exporterErr error
	// agents: the nodes' links are emulated by an agent beside each
	// (UseLinkAgents).
	agents    infra.LinkAgents
	closing   bool
	starting  sync.WaitGroup
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

var _ infra.Runner = (*Runner)(nil)

type service struct {
	name string // service name
	node *plan.Node
	spec *spec // nil until Start configured it

	running bool // a task runs and its exit would be unasked
	// reset: the testnet reset the node's home since its last start; a
	// copied home is delivered again, in volumes of a new generation.
	reset bool
	gen   int
	// pinned: the service is constrained to the swarm node its first task
	// ran on (copied homes: its stores are there).
	pinned    bool
	stopping  bool
	task      taskInfo
	logs      *exec.Cmd
	endpoints statefile.Endpoints
}

// New returns a swarm runner for one run.
func New(c infra.Config) *Runner {
	return &Runner{cfg: c, state: statefile.New(c.StatePath, c.RunID, Kind),
		exited: make(chan infra.Exit, 64), nodes: map[string]*service{}, addrs: map[string]string{}}
}

// NetworkName is the run's overlay network.
func NetworkName(runID string) string { return "benchnet-" + runID }

// ServiceName names a node's service.
func ServiceName(runID, node string) string { return "benchnet-" + runID + "-" + node }

func (r *Runner) label() string { return dockercli.Label + "=" + r.cfg.RunID }

// Exited reports nodes whose task ended unasked.
func (r *Runner) Exited() <-chan infra.Exit { return r.exited }

// Setup creates the overlay network and every node's service without a
// replica; peers reach a node by its dnsrr alias (its name).
func (r *Runner) Setup(ctx context.Context, p *plan.Testnet) error {
	if err := proctable.ClaimSetup(r.cfg.RunID, &r.mu, &r.plan, p); err != nil {
		return err
	}
	out, err := dockercli.Cmd(ctx, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.NodeID}} {{.Swarm.ControlAvailable}}")
	if err != nil {
		return fmt.Errorf("runner swarm: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 || f[0] != "active" {
		return fmt.Errorf("runner swarm: this Docker engine is not in a swarm (run `docker swarm init`, docs/swarm.md)")
	}
	if f[2] != "true" {
		return fmt.Errorf("runner swarm: this Docker engine is a swarm worker: run benchnet on a manager")
	}
	r.self = f[1]
	mirrorPeers(p)
	swarmNodes, err := listNodes(ctx)
	if err != nil {
		return err
	}
	constraints, err := placement(p, swarmNodes)
	if err != nil {
		return err
	}
	engines := findEngines(ctx, r.cfg.Engines)
	elig := eligible(p, swarmNodes, constraints)
	if err := checkEngines(elig, swarmNodes, engines); err != nil {
		return err
	}
	copyHomes := false
	for _, ids := range elig {
		for _, id := range ids {
			if e, ok := engines[id]; ok && !e.IsDefault() {
				copyHomes = true
			}
		}
	}
	r.mu.Lock()
	r.places, r.engines, r.elig, r.copyHomes = constraints, engines, elig, copyHomes
	r.mu.Unlock()
	if r.cfg.Harness {
		st, err := proctable.StartTime(os.Getpid())
		if err != nil {
			return fmt.Errorf("record harness: %w", err)
		}
		r.state.SetHarness(&statefile.Harness{PID: os.Getpid(), StartTime: st})
	}
	if err := r.state.Save(); err != nil {
		return err
	}
	if err := proctable.Register(r.cfg.RunID, r.cfg.StatePath); err != nil {
		return err
	}
	// The other engines, before anything is on them: down cleans them
	// from the state file alone.
	for _, id := range sortedKeys(engines) {
		if e := engines[id]; !e.IsDefault() {
			if err := r.state.Add(statefile.Resource{Kind: kindEngine, Name: stateName(e), Node: id}); err != nil {
				return err
			}
		}
	}
	nw := NetworkName(r.cfg.RunID)
	if err := r.state.Add(statefile.Resource{Kind: kindNetwork, Name: nw}); err != nil {
		return err
	}
	if _, err := dockercli.Cmd(ctx, "network", "create", "--driver", "overlay", "--attachable",
		"--subnet", p.Subnet.String(), "--gateway", p.Gateway.String(), "--label", r.label(), nw); err != nil {
		if strings.Contains(err.Error(), "overlap") {
			return fmt.Errorf("create network %s: %w (a docker network overlaps it): %v", nw, infra.ErrSubnetInUse, err)
		}
		return fmt.Errorf("create network %s: %w", nw, err)
	}
	for _, n := range p.Nodes {
		name := ServiceName(r.cfg.RunID, n.Name)
		if err := r.state.Add(statefile.Resource{Kind: kindService, Name: "node", Node: n.Name, Service: name}); err != nil {
			return err
		}
		args := []string{"service", "create", "--detach", "--quiet", "--no-resolve-image", "--replicas", "0",
			"--name", name, "--label", r.label(), "--label", "benchnet.node=" + n.Name,
			"--network", "name=" + nw + ",alias=" + n.Name, "--endpoint-mode", "dnsrr", "--restart-condition", "none",
			"--stop-grace-period", stopGrace.String()}
		for _, c := range constraints[n.Name] {
			args = append(args, "--constraint", c)
		}
		if _, err := dockercli.Cmd(ctx, append(args, placeholder)...); err != nil {
			return fmt.Errorf("create service of %s: %w", n.Name, err)
		}
		r.mu.Lock()
		r.nodes[n.Name] = &service{name: name, node: n}
		r.mu.Unlock()
	}
	for _, n := range p.Nodes {
		s := r.nodes[n.Name]
		s.endpoints = statefile.Endpoints{P2P: p2pAddr(n)}
		if err := r.state.SetEndpoints(n.Name, s.endpoints); err != nil {
			return err
		}
	}
	if err := r.startExporters(ctx, nw); err != nil {
		r.mu.Lock()
		r.exporterErr = err
		r.mu.Unlock()
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopWatch, r.watchDone = cancel, make(chan struct{})
	go r.watch(wctx)
	return nil
}

// placement maps nodes to placement constraints (infra.Placed): a node
// whose zone some swarm node carries as its benchnet.zone label is pinned
// to node.labels.benchnet.zone == <zone>; a node without a zone, or any
// node on an unlabelled swarm, runs anywhere; a named zone no swarm node
// carries is an error (its services would wait forever).
func placement(p *plan.Testnet, nodes []swarmNode) (map[string][]string, error) {
	labelled := map[string]bool{}
	for _, s := range nodes {
		if s.Zone != "" {
			labelled[s.Zone] = true
		}
	}
	c := map[string][]string{}
	var missing []string
	for _, n := range p.Nodes {
		switch pinned, ok := infra.Placed(n.Zone, labelled); {
		case !ok:
			missing = append(missing, n.Zone)
		case pinned:
			c[n.Name] = []string{"node.labels." + ZoneLabel + "==" + n.Zone}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("runner swarm: no swarm node is labelled %s for zone(s) %s (docker node update --label-add %s=<zone> <node>)", ZoneLabel, strings.Join(unique(missing), ", "), ZoneLabel)
	}
	return c, nil
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// p2pAddr is where peers dial a node: its alias on the overlay.
func p2pAddr(n *plan.Node) string { return net.JoinHostPort(n.Name, strconv.Itoa(n.P2PPort)) }

// Endpoints: P2P is the node's name on the overlay from Setup on; RPC and
// Metrics are the ports published for its running task.
func (r *Runner) Endpoints(node string) (statefile.Endpoints, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.nodes[node]
	if s == nil {
		return statefile.Endpoints{}, fmt.Errorf("endpoints of %s: no such node in run %s", node, r.cfg.RunID)
	}
	return s.endpoints, nil
}

// Start gives the node's service its command and one replica, waits for
// the task to run and records where its ports were published. A restart
// (after Stop or Kill) only asks for a fresh task of the same spec.
func (r *Runner) Start(ctx context.Context, proc infra.Process) (int, error) {
	key := proc.Node + "/" + proc.Name
	r.mu.Lock()
	s := r.nodes[proc.Node]
	closing := r.closing
	if !closing {
		r.starting.Add(1)
		defer r.starting.Done()
	}
	r.mu.Unlock()
	switch {
	case closing:
		return 0, fmt.Errorf("start %s: run %s is being cleaned up", key, r.cfg.RunID)
	case s == nil:
		return 0, fmt.Errorf("start %s: no node %q set up in run %s", key, proc.Node, r.cfg.RunID)
	case proc.Name != "node":
		// The manifest refuses what needs a second process (socket app).
		return 0, fmt.Errorf("start %s: a swarm service runs one process per node", key)
	case len(proc.Argv) == 0:
		return 0, fmt.Errorf("start %s: empty argv", key)
	}
	r.mu.Lock()
	running, configured := s.running, s.spec != nil
	var first []string
	if configured {
		first = s.spec.nodeArgv
	}
	r.mu.Unlock()
	if running {
		return 0, fmt.Errorf("start %s: already running", key)
	}
	if configured && !slices.Equal(first, proc.Argv) {
		// A restart re-runs the service's task as configured.
		return 0, fmt.Errorf("start %s: the node's service runs %q: a swarm node restarts with the command it first started with", key, first)
	}
	since := time.Now().Add(-time.Second)
	if !configured {
		r.mu.Lock()
		agents := r.agents
		r.mu.Unlock()
		var agentArgs, extra []string
		if agents != nil {
			exe := r.cfg.Executable
			if exe == "" {
				return 0, fmt.Errorf("start %s: link emulation on swarm runs the benchnet binary beside each node, and this harness has none (a Go test binary: build benchnet with CGO_ENABLED=0 and run it)", key)
			}
			if p := infra.LinkAgentPort; p == s.node.RPCPort || p == s.node.PrometheusPort || p == s.node.P2PPort {
				return 0, fmt.Errorf("start %s: the node's ports include the link agent's %d", key, p)
			}
			var err error
			if agentArgs, err = agents.Args(proc.Node); err != nil {
				return 0, fmt.Errorf("start %s: %w", key, err)
			}
			extra = []string{exe}
		}
		image, err := dockercli.EnsureImage(ctx, proc.Argv[0], extra...)
		if err != nil {
			return 0, fmt.Errorf("start %s: %w", key, err)
		}
		// Every engine that may run the task holds the image (loaded
		// through the engines' APIs, only where missing).
		targets, copyHomes := r.targets(proc.Node)
		for _, e := range targets {
			if err := r.images.ensure(ctx, e, image); err != nil {
				return 0, fmt.Errorf("start %s: %w", key, err)
			}
		}
		sp := r.specOf(s, proc, image, copyHomes)
		if agents != nil {
			sp.withLinkAgent(r.cfg.Executable, agentArgs)
		}
		if err := r.deliverHomes(ctx, sp, targets); err != nil {
			return 0, fmt.Errorf("start %s: %w", key, err)
		}
		if _, err := dockercli.Cmd(ctx, append(append([]string{"service", "update"}, sp.updateArgs(r.label())...), s.name)...); err != nil {
			return 0, fmt.Errorf("start %s: configure service %s: %w", key, s.name, err)
		}
		r.mu.Lock()
		s.spec = sp
		r.mu.Unlock()
		if err := r.writeStack(); err != nil {
			return 0, fmt.Errorf("start %s: %w", key, err)
		}
	} else if args, err := r.restartArgs(ctx, s); err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	} else if _, err := dockercli.Cmd(ctx, append(append([]string{"service", "update"}, args...), s.name)...); err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	task, err := waitTask(ctx, s.name)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w\n%s", key, err, serviceLogs(s.name))
	}
	host, err := r.nodeAddr(ctx, task.NodeID)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", key, err)
	}
	ep := statefile.Endpoints{P2P: p2pAddr(s.node)}
	if task.ContainerID != "" {
		// The engine (20.10 seen here) may bind a host-mode port to
		// different host ports for IPv4 and IPv6, and the task reports
		// the IPv6 one: the container's own bindings say where IPv4 goes.
		if ports, err := ipv4Ports(ctx, r.engineOf(task.NodeID), task.ContainerID); err == nil && len(ports) > 0 {
			task.Ports = ports
		}
	}
	for _, pt := range task.Ports {
		switch pt.TargetPort {
		case s.node.RPCPort:
			ep.RPC = net.JoinHostPort(host, strconv.Itoa(pt.PublishedPort))
		case s.node.PrometheusPort:
			ep.Metrics = net.JoinHostPort(host, strconv.Itoa(pt.PublishedPort))
		case infra.LinkAgentPort:
			ep.Linkem = net.JoinHostPort(host, strconv.Itoa(pt.PublishedPort))
		}
	}
	if ep.RPC == "" || ep.Metrics == "" {
		return 0, fmt.Errorf("start %s: task of %s published no RPC or metrics port (%+v)", key, s.name, task.Ports)
	}
	// A task on another machine has no pid here: the collector reads its
	// CPU and RSS from its own metrics. A task of another engine on this
	// very machine (swarmtest's workers) is a process here, and the
	// testbed check must count it as the run's own, not as load from
	// outside the run.
	pid := 0
	if task.NodeID == r.self || onThisMachine(task.PID, task.ContainerID) {
		pid = task.PID
	}
	logs := followLogs(s.name, since, proc.LogPath)
	r.mu.Lock()
	s.running, s.stopping, s.task, s.logs, s.endpoints = true, false, task, logs, ep
	r.mu.Unlock()
	if err := r.state.SetEndpoints(proc.Node, ep); err != nil {
		return 0, fmt.Errorf("start %s: record: %w", key, err)
	}
	if pid > 0 {
		st, _ := proctable.StartTime(pid)
		if err := r.state.Update(statefile.Resource{Kind: statefile.KindProcess, Name: proc.Name, Node: proc.Node, Container: task.ContainerID, PID: pid, StartTime: st}); err != nil {
			return 0, fmt.Errorf("start %s: record: %w", key, err)
		}
	}
	return pid, nil
}

// targets are the engines that may run node's task (each once), and
// whether its homes are copied to them.
func (r *Runner) targets(node string) ([]dockercli.Engine, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []dockercli.Engine
	seen := map[string]bool{}
	for _, id := range r.elig[node] {
		e := r.engines[id]
		if !seen[stateName(e)] {
			seen[stateName(e)] = true
			out = append(out, e)
		}
	}
	return out, r.copyHomes
}

// deliverHomes fills sp's copied volumes on every engine in targets with
// the run directory's content at their paths (dockercli's FillVolume:
// everything carries the run's label, so down removes an interrupted
// delivery too).
func (r *Runner) deliverHomes(ctx context.Context, sp *spec, targets []dockercli.Engine) error {
	label := r.label()
	for _, v := range sp.volumes {
		if !v.copied || v.out {
			continue
		}
		for _, e := range targets {
			if err := e.FillVolume(ctx, v.name, label, sp.image, sp.nodeArgv[0], v.path, v.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyBack brings what s's task wrote into its out volumes (a gossip
// host's trace) from the engine it ran on into the run directory, once the
// task has ended; the engines it did not run on hold no such volume.
func (r *Runner) copyBack(ctx context.Context, s *service) error {
	r.mu.Lock()
	sp, task := s.spec, s.task
	r.mu.Unlock()
	if sp == nil {
		return nil
	}
	var errs []error
	for _, v := range sp.volumes {
		if !v.out {
			continue
		}
		if err := r.engineOf(task.NodeID).CopyFromVolume(ctx, v.name, r.label(), sp.image, sp.nodeArgv[0], v.path, v.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.node.Name, err))
		}
	}
	return errors.Join(errs...)
}

var _ infra.HomeCopier = (*Runner)(nil)

var _ infra.LinkAgentUser = (*Runner)(nil)

// UseLinkAgents starts every node under its link agent (linkem's "agent"
// backend): the testnet calls it before Setup when links are emulated.
func (r *Runner) UseLinkAgents(a infra.LinkAgents) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents = a
}

// onThisMachine reports whether pid, as another engine reported it for
// container, is that container's process on this machine: the engine runs
// in this kernel's pid namespace when /proc/<pid>/cgroup names the
// container (cgroup v1 and v2 paths both hold the full id). A pid from
// another machine names some other process here, or none.
func onThisMachine(pid int, container string) bool {
	if pid <= 0 || len(container) < 64 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && bytes.Contains(b, []byte(container))
}
