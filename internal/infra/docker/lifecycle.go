package docker

import (
	"context"
	"fmt"
)

// Kill ends one node process at once (docker kill: SIGKILL to the
// container's init, which takes the container's processes with it) and
// removes its container, like Stop without the grace period; the exit is
// expected, so it is not reported on Exited.
func (r *Runner) Kill(ctx context.Context, node, name string) error {
	c, err := r.proc("kill", node, name, true)
	if err != nil {
		return err
	}
	if _, err := dockerCmd(ctx, "kill", c.name); err != nil && !noSuch(err) {
		return fmt.Errorf("kill %s/%s: %w", node, name, err)
	}
	return r.remove(ctx, c, node, name)
}

// Pause freezes one node's container (docker pause: the cgroup freezer,
// the container counterpart of SIGSTOP to the process group).
func (r *Runner) Pause(ctx context.Context, node, name string) error {
	return r.freeze(ctx, "pause", node, name)
}

// Resume thaws a container Pause froze.
func (r *Runner) Resume(ctx context.Context, node, name string) error {
	return r.freeze(ctx, "unpause", node, name)
}

func (r *Runner) freeze(ctx context.Context, verb, node, name string) error {
	c, err := r.proc(verb, node, name, false)
	if err != nil {
		return err
	}
	if _, err := dockerCmd(ctx, verb, c.name); err != nil {
		return fmt.Errorf("%s %s/%s: %w", verb, node, name, err)
	}
	return nil
}

// proc finds a running process of the run; stopping marks an exit as asked for.
func (r *Runner) proc(verb, node, name string, stopping bool) (*container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.procs[node+"/"+name]
	if c == nil {
		return nil, fmt.Errorf("%s %s/%s: no such process in run %s", verb, node, name, r.cfg.RunID)
	}
	if stopping {
		c.stopping = true
	}
	return c, nil
}
