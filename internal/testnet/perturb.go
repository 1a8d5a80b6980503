package testnet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

// Node lifecycle and link changes during a run. Every change is an event
// (kind "node_<action>", so the report marks it on its time plots), and
// every signal and link change goes through the runner or the link
// emulation: nothing here touches a pid or a namespace.

// NotStartedByUp lists the nodes Up leaves stopped: the rotating group, which
// the rotate scenario starts and stops during the load. `benchnet load`
// leaves them out of the warm-up, the load, the collectors and the drain.
func NotStartedByUp(m *manifest.Manifest, p *plan.Testnet) map[string]bool {
	out := map[string]bool{}
	if m.Rotate == nil {
		return out
	}
	for _, n := range p.Nodes {
		if n.Group == m.Rotate.Group {
			out[n.Name] = true
		}
	}
	return out
}

// NotStarted reports whether the node is not running as Up left it: a
// rotating node, or a late start (Options.LateStarts) not yet due.
func (t *Testnet) NotStarted(node string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.absent[node]
}

// Running is !NotStarted: whether the collectors and pollers should reach
// the node now.
func (t *Testnet) Running(node string) bool { return !t.NotStarted(node) }

func (t *Testnet) node(name string) (*plan.Node, error) {
	n := t.Plan.Node(name)
	if n == nil {
		return nil, fmt.Errorf("no node %q in the plan", name)
	}
	return n, nil
}

// processes are the names of a node's processes, the node first (the
// driver's, in the reverse of their start order).
func (t *Testnet) processes(n *plan.Node) []string {
	return node.ProcessNames(t.Driver, n, t.bins, t.env)
}

func (t *Testnet) event(kind, node, detail string) { _ = t.Dir.Event(kind, node, detail) }

// Kill ends a node at once (SIGKILL), as a crash would.
func (t *Testnet) Kill(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	for _, proc := range t.processes(n) {
		if err := t.Runner.Kill(ctx, name, proc); err != nil {
			return err
		}
	}
	t.event("node_kill", name, "SIGKILL")
	return nil
}

// StopNode stops a node politely (SIGTERM, SIGKILL after the grace).
func (t *Testnet) StopNode(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	for _, proc := range t.processes(n) {
		if err := t.Runner.Stop(ctx, name, proc); err != nil {
			return err
		}
	}
	t.event("node_stop", name, "SIGTERM")
	return nil
}

// Pause freezes a node's processes (SIGSTOP).
func (t *Testnet) Pause(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	for _, proc := range t.processes(n) {
		if err := t.Runner.Pause(ctx, name, proc); err != nil {
			return err
		}
	}
	t.event("node_pause", name, "SIGSTOP")
	return nil
}

// Resume thaws a paused node (SIGCONT).
func (t *Testnet) Resume(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	for _, proc := range slices.Backward(t.processes(n)) {
		if err := t.Runner.Resume(ctx, name, proc); err != nil {
			return err
		}
	}
	t.event("node_resume", name, "SIGCONT")
	return nil
}

// StartNode starts a node that is not running (never started, stopped,
// killed or wiped) with its home as it is.
func (t *Testnet) StartNode(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	if err := t.startNode(ctx, n, t.bins, t.env); err != nil {
		return err
	}
	if t.NotStarted(name) {
		// A node the collectors leave alone (a rotating one) joins them
		// once it answers, as a late start does.
		t.awaitAnswer(ctx, n)
	}
	t.mu.Lock()
	delete(t.absent, name)
	t.mu.Unlock()
	return nil
}

// Restart starts a stopped or killed node again with the same home.
func (t *Testnet) Restart(ctx context.Context, name string) error {
	if err := t.StartNode(ctx, name); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	t.event("node_restart", name, "same home")
	return nil
}

// Wipe resets a stopped node's home to its state at genesis, as its driver
// does it (CometBFT: the release's own unsafe-reset-all, the app's store
// too), so that it next starts empty (a CometBFT node block-syncs). A kind
// that cannot answers with an error wrapping node.ErrNotSupported.
func (t *Testnet) Wipe(ctx context.Context, name string) error {
	n, err := t.node(name)
	if err != nil {
		return err
	}
	if err := t.Driver.Reset(ctx, n, t.bins, t.env); err != nil {
		return fmt.Errorf("wipe %s: %w", name, err)
	}
	if hc, ok := t.Runner.(infra.HomeCopier); ok {
		hc.HomeReset(name)
	}
	t.event("node_wipe", name, "home reset to genesis")
	return nil
}

// ErrNoLinkem is returned by link changes on a testnet without link emulation.
var ErrNoLinkem = fmt.Errorf("links are not emulated in this testnet (set [network].linkem = \"netem\" or \"userspace\")")

// Disconnect cuts every link between each of nodes and every other node.
func (t *Testnet) Disconnect(ctx context.Context, nodes []string) error {
	return t.cut(ctx, "node_disconnect", nodes, func(n string) [][2][]string {
		return [][2][]string{{{n}, t.others([]string{n})}}
	})
}

// Partition cuts every link between the set and the rest of the testnet.
func (t *Testnet) Partition(ctx context.Context, set []string) error {
	return t.cut(ctx, "node_partition", []string{strings.Join(set, ",")}, func(string) [][2][]string {
		return [][2][]string{{set, t.others(set)}}
	})
}

func (t *Testnet) cut(ctx context.Context, kind string, names []string, sides func(string) [][2][]string) error {
	if t.model == nil {
		return ErrNoLinkem
	}
	saved := t.model.Save()
	for _, n := range names {
		for _, s := range sides(n) {
			if err := t.model.Partition(s[0], s[1]); err != nil {
				t.model.Restore(saved)
				return err
			}
		}
	}
	if err := t.ApplyLinks(ctx); err != nil {
		return fmt.Errorf("%s %s: %w", strings.TrimPrefix(kind, "node_"), strings.Join(names, " "), err)
	}
	for _, n := range names {
		t.event(kind, n, "links cut")
	}
	return nil
}

// Heal removes every cut and override: links are back to the plan's.
func (t *Testnet) Heal(ctx context.Context) error {
	if t.model == nil {
		return ErrNoLinkem
	}
	t.model.Heal()
	if err := t.ApplyLinks(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	t.event("node_heal", "", "links as planned")
	return nil
}

// others is every node of the plan not in set.
func (t *Testnet) others(set []string) []string {
	var out []string
	for _, n := range t.Plan.Nodes {
		if !slices.Contains(set, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// Forget marks a stopped node as not started again (a rotating node between
// cycles): the height poller and the readiness checks skip it.
func (t *Testnet) Forget(node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.absent[node] = true
}
