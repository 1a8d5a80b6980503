package swarm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// watch reports tasks that ended unasked: one `service ls` for the whole
// run every two seconds, a task's details only for a service that lost it.
func (r *Runner) watch(ctx context.Context) {
	defer close(r.watchDone)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		out, err := dockercli.Cmd(ctx, "service", "ls", "--filter", "label="+r.label(), "--format", "{{.Name}} {{.Replicas}}")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, reps, ok := strings.Cut(line, " ")
			if !ok || !strings.HasPrefix(reps, "0/") {
				continue
			}
			r.lost(ctx, name)
		}
	}
}

// lost reports a service's task as exited when it was running unstopped.
func (r *Runner) lost(ctx context.Context, svc string) {
	r.mu.Lock()
	var s *service
	for _, x := range r.nodes {
		if x.name == svc {
			s = x
		}
	}
	if s == nil || !s.running || s.stopping || r.closing {
		r.mu.Unlock()
		return
	}
	taskID, pid := s.task.ID, s.task.PID
	r.mu.Unlock()
	status := "task gone"
	if ts, err := tasks(ctx, svc, true); err == nil {
		for _, t := range ts {
			if t.ID == taskID {
				if t.Status.State == "running" {
					return // the listing raced the task's start
				}
				status = fmt.Sprintf("task %s (exit code %d) %s", t.Status.State, t.Status.ContainerStatus.ExitCode, t.Status.Err)
			}
		}
	}
	r.mu.Lock()
	if !s.running || s.stopping || r.closing {
		r.mu.Unlock()
		return
	}
	s.running = false
	logs := s.logs
	r.mu.Unlock()
	stopLogs(logs)
	select {
	case r.exited <- infra.Exit{Node: s.node.Name, Name: "node", PID: pid, Status: status}:
	default:
	}
}

// Stop scales the node's service to no replica: the engine sends SIGTERM
// and SIGKILL after the grace, and Stop waits for the task to end.
func (r *Runner) Stop(ctx context.Context, node, name string) error {
	s, err := r.stopping("stop", node, name)
	if err != nil {
		return err
	}
	return r.scaleDown(ctx, s)
}

func (r *Runner) stopping(verb, node, name string) (*service, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.nodes[node]
	if s == nil || name != "node" || !s.running {
		return nil, fmt.Errorf("%s %s/%s: no such process in run %s", verb, node, name, r.cfg.RunID)
	}
	s.stopping = true
	return s, nil
}

func (r *Runner) scaleDown(ctx context.Context, s *service) error {
	if _, err := dockercli.Cmd(ctx, "service", "update", "--detach", "--quiet", "--replicas", "0", s.name); err != nil {
		return fmt.Errorf("stop %s: %w", s.node.Name, err)
	}
	deadline := time.Now().Add(stopGrace + 30*time.Second)
	for time.Now().Before(deadline) {
		ts, err := tasks(ctx, s.name, true)
		if err != nil {
			break
		}
		up := false
		for _, t := range ts {
			if t.ID == s.task.ID && (t.Status.State == "running" || t.Status.State == "starting") {
				up = true
			}
		}
		if !up {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.mu.Lock()
	s.running = false
	logs := s.logs
	r.mu.Unlock()
	stopLogs(logs)
	cerr := r.copyBack(ctx, s)
	return errors.Join(cerr, r.state.RemoveFunc(func(x statefile.Resource) bool { return x.Kind == statefile.KindProcess && x.Node == s.node.Name }))
}

// Kill ends the node's process at once: SIGKILL to its container where it
// runs on this engine, then no replica (so a restart gets a new task).
func (r *Runner) Kill(ctx context.Context, node, name string) error {
	s, err := r.stopping("kill", node, name)
	if err != nil {
		return err
	}
	if s.task.ContainerID != "" {
		if _, err := r.engineOf(s.task.NodeID).Cmd(ctx, "kill", s.task.ContainerID); err != nil && !dockercli.NoSuch(err) {
			return fmt.Errorf("kill %s/%s: %w", node, name, err)
		}
	}
	return r.scaleDown(ctx, s)
}

// Pause freezes the node's container (cgroup freezer); only for a task on
// this engine.
func (r *Runner) Pause(ctx context.Context, node, name string) error {
	return r.freeze(ctx, "pause", node, name)
}

// Resume thaws a container Pause froze.
func (r *Runner) Resume(ctx context.Context, node, name string) error {
	return r.freeze(ctx, "unpause", node, name)
}

func (r *Runner) freeze(ctx context.Context, verb, node, name string) error {
	r.mu.Lock()
	s := r.nodes[node]
	var task taskInfo
	if s != nil {
		task = s.task
	}
	r.mu.Unlock()
	if s == nil || name != "node" {
		return fmt.Errorf("%s %s/%s: no such process in run %s", verb, node, name, r.cfg.RunID)
	}
	if _, err := r.engineOf(task.NodeID).Cmd(ctx, verb, task.ContainerID); err != nil {
		return fmt.Errorf("%s %s/%s: %w", verb, node, name, err)
	}
	return nil
}

// restartArgs ask for a fresh task of s's spec. After HomeReset a copied
// home goes into volumes of a new generation (the old ones may still be
// held by the ended task's container), swapped into the service's mounts.
func (r *Runner) restartArgs(ctx context.Context, s *service) ([]string, error) {
	args := []string{"--detach", "--quiet", "--replicas", "1", "--force"}
	r.mu.Lock()
	reset, sp, pinned, last := s.reset, s.spec, s.pinned, s.task.NodeID
	r.mu.Unlock()
	if !hasCopied(sp.volumes) {
		return args, nil
	}
	// A copied home lives on: the node restarts on the engine it ran on,
	// with what it stored there (another engine holds only the copy made
	// at the start, and a validator restarted on it would sign from its
	// genesis state again).
	if !pinned && last != "" {
		args = append(args, "--constraint-add", "node.id=="+last)
		r.mu.Lock()
		s.pinned = true
		r.mu.Unlock()
	}
	if !reset {
		return args, nil
	}
	next := *sp
	next.volumes = nil
	r.mu.Lock()
	s.gen++
	gen := s.gen
	r.mu.Unlock()
	for i, v := range sp.volumes {
		// An out volume keeps its name: what the process wrote before
		// goes on, as a bound directory would.
		if v.copied && !v.out {
			v.name = s.name + "-" + strconv.Itoa(i) + "-g" + strconv.Itoa(gen)
			// --mount-add replaces the mount at the same target (the CLI
			// keys mounts by target; a --mount-rm of it would remove both).
			args = append(args, "--mount-add", v.mount(r.label()))
		}
		next.volumes = append(next.volumes, v)
	}
	targets, _ := r.targets(s.node.Name)
	if err := r.deliverHomes(ctx, &next, targets); err != nil {
		return nil, err
	}
	r.mu.Lock()
	s.spec, s.reset = &next, false
	r.mu.Unlock()
	return args, r.writeStack()
}

func hasCopied(vs []volume) bool {
	for _, v := range vs {
		if v.copied {
			return true
		}
	}
	return false
}

// HomeReset is told by the testnet that node's home in the run directory
// was reset to genesis: a copied home is delivered again at its next start.
func (r *Runner) HomeReset(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.nodes[node]; s != nil {
		s.reset = true
	}
}
