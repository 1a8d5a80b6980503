// Package infra is the seam between a resolved plan and the machinery that
// hosts it. A Runner gives every node of a plan its own host (network
// namespace locally, a container or pod later) and runs processes in it;
// everything it creates it must be able to remove again, even from a state
// file after the harness itself was killed.
package infra

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/registry"
)

// Process is one process to run on a node's host.
type Process struct {
	Node    string   // plan node name; the process runs on that node's host
	Name    string   // role of the process on the host: "node", "app", …
	Argv    []string // exec'd directly, never through a shell
	Env     []string // extra environment (KEY=VALUE); the runner adds a minimal base
	Dir     string   // working directory
	LogPath string   // stdout and stderr go here (appended)
	// Unprivileged runs the process as an unprivileged user where the runner
	// can; ChownDirs are handed to that user first (node homes).
	Unprivileged bool
	ChownDirs    []string
	// Dirs are other directories of the run the process writes (the
	// gossip host's traces/): a runner that gives the process a
	// filesystem of its own mounts them at the same path, so what is
	// written there lands in the run directory.
	Dirs []string
}

// Mounts are the directories a runner with filesystems of its own gives
// the process, at their own paths: its homes, its other directories and
// its working directory, each once, in that order.
func (p Process) Mounts() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range append(append(append([]string(nil), p.ChownDirs...), p.Dirs...), p.Dir) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// Exit reports a process that ended without Stop being asked for it.
type Exit struct {
	Node, Name string
	PID        int
	Status     string // e.g. "exit status 1", "signal: killed"
}

// Runner hosts the nodes of one run.
type Runner interface {
	// Setup creates every node's host and the network joining them.
	Setup(ctx context.Context, p *plan.Testnet) error
	// Start starts a process on a node's host and returns its pid.
	Start(ctx context.Context, proc Process) (pid int, err error)
	// Stop stops one process (SIGTERM, then SIGKILL after a grace period).
	Stop(ctx context.Context, node, name string) error
	// Kill ends one process at once (SIGKILL to its whole group), as a
	// crash would; like Stop, the exit is expected and not on Exited.
	Kill(ctx context.Context, node, name string) error
	// Pause freezes one process's whole group (SIGSTOP); Resume thaws it
	// (SIGCONT). A paused process keeps its sockets: peers see a node that
	// stopped answering, not one that left.
	Pause(ctx context.Context, node, name string) error
	Resume(ctx context.Context, node, name string) error
	// Exited reports processes that ended unexpectedly.
	Exited() <-chan Exit
	// Endpoints reports where a node is reached, as CometBFT's e2e takes
	// addresses from its infrastructure data: P2P once Setup ran (its host
	// is the node's address on the testnet's network, which node homes are
	// generated with), RPC and Metrics once its "node" process started (the
	// harness dials them). Runners that place nodes at the plan's addresses
	// return those (PlanEndpoints); a swarm returns service virtual IPs and
	// ports published on the machine running the node.
	Endpoints(node string) (statefile.Endpoints, error)
	// Cleanup stops every process and removes everything Setup and Start
	// created. It is idempotent.
	Cleanup(ctx context.Context) error
}

// MachineWatcher is implemented by runners whose nodes run on several
// machines (swarm): each machine serves its load and CPU time under
// node_exporter's names (collect's machine exporter) at URL, which the
// collector scrapes into metrics/machines.csv. A machine whose exporter
// does not run is left out, and named in the error beside the others.
type MachineWatcher interface {
	MachineMetrics(ctx context.Context) ([]MachineMetrics, error)
}

// MachineMetrics is where one machine's exporter answers.
type MachineMetrics struct {
	Name string // the cluster's name for the machine
	URL  string // its /metrics
}

// LinkAgents is a link-emulation backend whose emulation runs beside each
// node, in its network namespace (linkem's "agent" backend): a runner
// that starts nodes apart wraps each node's argv in `benchnet node
// linkem-agent ARGS --metrics :LinkAgentPort -- ARGV`.
type LinkAgents interface {
	// Args are node's agent flags, taken when the node first starts.
	Args(node string) ([]string, error)
}

// LinkAgentUser is a runner that can start its nodes under link agents
// (swarm): it needs the benchnet binary (Config.Executable) in the node's
// image, NET_ADMIN for the task, and publishes the agent's metrics port
// (statefile.Endpoints.Linkem).
type LinkAgentUser interface {
	UseLinkAgents(LinkAgents)
}

// LinkAgentPort is the agent's metrics port inside a node's namespace.
const LinkAgentPort = 9464

// HomeCopier is implemented by runners that may run a node on a copy of
// its home (a volume on another machine's engine) rather than on the run
// directory's: after the testnet resets a node's home there (a rotating
// node's wipe), the runner delivers it again at the node's next start.
type HomeCopier interface {
	HomeReset(node string)
}

// PlanEndpoints are a node's endpoints at its plan address.
func PlanEndpoints(n *plan.Node) statefile.Endpoints {
	at := func(port int) string { return netip.AddrPortFrom(n.Addr, uint16(port)).String() }
	return statefile.Endpoints{P2P: at(n.P2PPort), RPC: at(n.RPCPort), Metrics: at(n.PrometheusPort)}
}

// StateEndpoints returns the endpoints a state file records, by node (none
// for files from before runners recorded them).
func StateEndpoints(statePath string) (map[string]statefile.Endpoints, error) {
	s, err := statefile.Read(statePath)
	if err != nil {
		return nil, err
	}
	return s.Endpoints(), nil
}

// Config is what every runner is constructed with.
type Config struct {
	RunID     string // 6 hex digits; names and labels the run's resources
	StatePath string // the run's state.json
	// Harness records this process as the run's owner (see local.Runner).
	Harness bool
	// Per-node limits for runners that can enforce them (containers);
	// zero means none.
	CPUs        float64
	MemoryBytes int64
	// Engines are Docker engines the runner may drive besides the default
	// one (DOCKER_HOST values or docker context names; the swarm runner's
	// machines).
	Engines []string
	// Executable is the benchnet binary a runner runs beside the nodes
	// (swarm's machine exporters; empty: none).
	Executable string
}

// Kind is one runner implementation: how to build it, and how to take a run
// down from its state file alone (after the harness died).
type Kind struct {
	New  func(Config) (Runner, error)
	Down func(ctx context.Context, statePath string, log io.Writer) error
	// Sweep removes what the runner created for any run, state file or
	// not (nil: nothing to sweep).
	Sweep func(ctx context.Context) error
	// Machines lists the machines a cluster runner places nodes on, with
	// their sizes (nil: the runner runs every node on this machine).
	Machines func(ctx context.Context) ([]Machine, error)
	// Usage reports each node's CPU and memory as the runner's engine
	// counts them (a container's cgroup), from the state file; nil: the
	// node processes are on this machine and /proc says it.
	Usage func(ctx context.Context, statePath string) (map[string]Usage, error)
	// Commands are the host commands the runner execs on this machine
	// (setup installs them).
	Commands func() []string
	// Leftovers lists what the runner created for run runID that still
	// exists ("netns bn-…", "container 3f2a…"); nil: it creates nothing
	// a process check would miss. Tests and `down` prove a teardown
	// complete with it.
	Leftovers func(ctx context.Context, runID string) ([]string, error)
	Caps      caps.Record
}

// Usage is one node's resource use as its runner's engine reports it.
type Usage struct {
	CPUPercent float64 // of one core, over the engine's sample
	MemBytes   int64
}

// NodeUsage asks the runner that wrote a state file for its nodes' usage
// (nil, nil: the runner leaves it to /proc).
func NodeUsage(ctx context.Context, statePath string) (map[string]Usage, error) {
	name, err := StateRunner(statePath)
	if err != nil {
		return nil, err
	}
	k, err := lookup(name)
	if err != nil || k.Usage == nil {
		return nil, err
	}
	return k.Usage(ctx, statePath)
}

// Commands lists the host commands the runner called name execs.
func Commands(name string) []string {
	k, err := lookup(name)
	if err != nil || k.Commands == nil {
		return nil
	}
	return k.Commands()
}

// Machine is one machine of a cluster runner, as its engine reports it.
type Machine struct {
	ID, Hostname, Zone string
	NCPU               int
	MemBytes           int64
}

// Placed says where a node of zone goes on a cluster whose machines carry
// the zone labels in labelled (the placement label's values): pinned to
// the machines of its zone, or anywhere. A node the manifest gave no zone
// (manifest.DefaultZone) goes anywhere unless some machine is labelled
// with it, so a cluster labelled for the QA testbed still runs the
// quickstart; an unlabelled cluster places every node anywhere. ok is
// false for a named zone no machine carries (its tasks would wait forever).
func Placed(zone string, labelled map[string]bool) (pinned, ok bool) {
	switch {
	case len(labelled) == 0:
		return false, true
	case labelled[zone]:
		return true, true
	case zone == manifest.DefaultZone:
		return false, true
	}
	return false, false
}

// ErrOneMachine is Machines' answer for a runner that runs every node on
// this machine.
var ErrOneMachine = errors.New("the runner runs every node on this machine")

// Machines lists the machines the runner called name places nodes on
// (ErrOneMachine for a runner without any; its own error when the cluster
// cannot be asked, e.g. this engine is no swarm manager).
func Machines(ctx context.Context, name string) ([]Machine, error) {
	k, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if k.Machines == nil {
		return nil, ErrOneMachine
	}
	return k.Machines(ctx)
}

// ErrSubnetInUse is wrapped by a runner's Setup when the plan's subnet
// overlaps a network the host or the engine already has: the manifest's
// fault (network.subnet), not the machine's.
var ErrSubnetInUse = errors.New("subnet in use")

var kinds = registry.New[Kind]("runner")

// Register makes a runner available by name; runner packages call it from
// init.
func Register(name string, k Kind) {
	kinds.Register(name, k)
	caps.Declare(name, k.Caps)
}

func lookup(name string) (Kind, error) { return kinds.Lookup(name) }

// New builds the runner called name.
func New(name string, c Config) (Runner, error) {
	k, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return k.New(c)
}

// StateRunner returns the runner kind a state file was written by; files
// from before runners were recorded are the local runner's.
func StateRunner(statePath string) (string, error) {
	data, err := os.ReadFile(statePath)
	if err != nil {
		return "", fmt.Errorf("read state: %w", err)
	}
	var doc struct {
		Runner string `json:"runner"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("decode state %s: %w", statePath, err)
	}
	if doc.Runner == "" {
		return "local", nil
	}
	return doc.Runner, nil
}

// Down takes a run down from its state file with the runner that wrote it.
func Down(ctx context.Context, statePath string, log io.Writer) error {
	name, err := StateRunner(statePath)
	if err != nil {
		return err
	}
	k, err := lookup(name)
	if err != nil {
		return err
	}
	return k.Down(ctx, statePath, log)
}

// Caps returns the capabilities the runner called name declares (the zero
// record, the most conservative, for an unknown name).
func Caps(name string) caps.Record {
	r, _ := caps.Of(name)
	return r
}

// Leftovers asks every runner built in what of run runID still exists
// on the machine (or its engines), in runner-name order.
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	var left []string
	var errs []error
	for _, n := range names() {
		k, _ := lookup(n)
		if k.Leftovers == nil {
			continue
		}
		l, err := k.Leftovers(ctx, runID)
		if err != nil {
			errs = append(errs, fmt.Errorf("leftovers of runner %s: %w", n, err))
		}
		left = append(left, l...)
	}
	return left, errors.Join(errs...)
}

func names() []string { return kinds.Names() }

// SweepAll runs every runner's Sweep: what benchnet created and no state
// file records any more (`down --all`).
func SweepAll(ctx context.Context) error {
	var errs []error
	for _, n := range names() {
		k, _ := lookup(n)
		if k.Sweep == nil {
			continue
		}
		if err := k.Sweep(ctx); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
