package swarm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/plan"
)

// kindEngine records, in state.json, an engine of the swarm the run used
// (Name: its DOCKER_HOST or "context:<name>", Node: its swarm node id), so
// `down` cleans it after a kill -9 of the harness too.
const kindEngine = "engine"

// swarmNode is one machine of the swarm as the manager sees it.
type swarmNode struct {
	ID, Hostname, Addr string
	Ready, Active      bool
	Zone               string
	NCPU               int
	MemBytes           int64
}

// listNodes reads every node of the swarm from the manager.
func listNodes(ctx context.Context) ([]swarmNode, error) {
	ids, err := dockercli.Cmd(ctx, "node", "ls", "--quiet")
	if err != nil {
		return nil, fmt.Errorf("list swarm nodes: %w", err)
	}
	format := `{{.ID}}|{{.Description.Hostname}}|{{.Status.State}}|{{.Spec.Availability}}|{{index .Spec.Labels "` + ZoneLabel + `"}}|{{.Description.Resources.NanoCPUs}}|{{.Description.Resources.MemoryBytes}}|{{.Status.Addr}}`
	out, err := dockercli.Cmd(ctx, append([]string{"node", "inspect", "--format", format}, strings.Fields(string(ids))...)...)
	if err != nil {
		return nil, fmt.Errorf("inspect swarm nodes: %w", err)
	}
	var nodes []swarmNode
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 8 {
			continue
		}
		n := swarmNode{ID: f[0], Hostname: f[1], Ready: f[2] == "ready", Active: f[3] == "active", Zone: f[4], Addr: f[7]}
		var nano int64
		fmt.Sscan(f[5], &nano)
		n.NCPU = int(nano / 1e9)
		fmt.Sscan(f[6], &n.MemBytes)
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// parseEngine reads an [infra] engines entry: a DOCKER_HOST value has a
// scheme, anything else names a docker context.
func parseEngine(s string) dockercli.Engine {
	if strings.Contains(s, "://") {
		return dockercli.Engine{Host: s}
	}
	return dockercli.Engine{Context: s}
}

// stateName and engineFromState are an engine's name in state.json.
func stateName(e dockercli.Engine) string {
	if e.Context != "" {
		return "context:" + e.Context
	}
	return e.Host
}

func engineFromState(name string) dockercli.Engine {
	if c, ok := strings.CutPrefix(name, "context:"); ok {
		return dockercli.Engine{Context: c}
	}
	return dockercli.Engine{Host: name}
}

// findEngines maps swarm node ids to an engine the CLI reaches there: the
// default engine (the manager), the explicit entries, then the user's
// docker contexts, each asked for the swarm node id it is (`docker info`).
// An engine that does not answer within 10 s is skipped.
func findEngines(ctx context.Context, explicit []string) map[string]dockercli.Engine {
	cands := []dockercli.Engine{dockercli.Default}
	for _, e := range explicit {
		cands = append(cands, parseEngine(e))
	}
	if out, err := dockercli.Cmd(ctx, "context", "ls", "--format", "{{.Name}}"); err == nil {
		for _, name := range strings.Fields(string(out)) {
			if name != "default" {
				cands = append(cands, dockercli.Engine{Context: name})
			}
		}
	}
	ids := make([]string, len(cands))
	var wg sync.WaitGroup
	for i, e := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if out, err := e.Cmd(cctx, "info", "--format", "{{.Swarm.NodeID}}"); err == nil {
				ids[i] = strings.TrimSpace(string(out))
			}
		}()
	}
	wg.Wait()
	found := map[string]dockercli.Engine{}
	for i, id := range ids {
		if _, dup := found[id]; id != "" && !dup {
			found[id] = cands[i]
		}
	}
	return found
}

// eligible maps each plan node to the swarm nodes that may run its task:
// ready, active, and in its zone when placement pinned it there.
func eligible(p *plan.Testnet, nodes []swarmNode, constraints map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, n := range p.Nodes {
		pinned := len(constraints[n.Name]) > 0
		for _, s := range nodes {
			if s.Ready && s.Active && (!pinned || s.Zone == n.Zone) {
				out[n.Name] = append(out[n.Name], s.ID)
			}
		}
	}
	return out
}

// checkEngines refuses a swarm node that may get a task but no engine
// reaches: its image could not be loaded nor its leftovers removed.
func checkEngines(elig map[string][]string, nodes []swarmNode, engines map[string]dockercli.Engine) error {
	need := map[string]bool{}
	for _, ids := range elig {
		for _, id := range ids {
			need[id] = true
		}
	}
	var missing []string
	for _, s := range nodes {
		if need[s.ID] {
			if _, ok := engines[s.ID]; !ok {
				missing = append(missing, fmt.Sprintf("%s (id %s, address %s)", s.Hostname, s.ID, s.Addr))
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("runner swarm: no Docker engine reaches swarm node(s) %s, which may get tasks: "+
		"add a docker context for each (docker context create <name> --docker host=ssh://<machine>) or list it in [infra] engines, "+
		"or drain it (docker node update --availability drain <node>)", strings.Join(missing, ", "))
}

// imageCopies loads each image into each engine at most once per run,
// concurrent starts of nodes of the same release waiting for one copy.
type imageCopies struct {
	mu   sync.Mutex
	done map[string]*copyOnce
}

type copyOnce struct {
	once sync.Once
	err  error
}

func (c *imageCopies) ensure(ctx context.Context, e dockercli.Engine, ref string) error {
	c.mu.Lock()
	if c.done == nil {
		c.done = map[string]*copyOnce{}
	}
	key := stateName(e) + " " + ref
	o := c.done[key]
	if o == nil {
		o = &copyOnce{}
		c.done[key] = o
	}
	c.mu.Unlock()
	o.once.Do(func() { o.err = e.CopyImage(ctx, ref) })
	return o.err
}

// Machines lists the swarm's ready, active nodes with their sizes, from
// the manager; an error when this engine is no swarm manager.
func Machines(ctx context.Context) ([]infra.Machine, error) {
	nodes, err := listNodes(ctx)
	if err != nil {
		return nil, err
	}
	var out []infra.Machine
	for _, n := range nodes {
		if n.Ready && n.Active {
			out = append(out, infra.Machine{ID: n.ID, Hostname: n.Hostname, Zone: n.Zone, NCPU: n.NCPU, MemBytes: n.MemBytes})
		}
	}
	return out, nil
}

// Leftovers lists what run runID left on the swarm's engines other than
// the default one (the docker runner's hook lists that one, services
// included): task containers, home volumes and networks on the workers
// the user's docker contexts reach.
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	if !dockercli.Default.SwarmActive(ctx) {
		return nil, nil
	}
	var left []string
	var errs []error
	engines := findEngines(ctx, nil)
	for _, id := range sortedKeys(engines) {
		if e := engines[id]; !e.IsDefault() {
			l, err := e.Labelled(ctx, dockercli.Label+"="+runID)
			left, errs = append(left, l...), append(errs, err)
		}
	}
	return left, errors.Join(errs...)
}
