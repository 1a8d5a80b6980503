package local

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Kill sends SIGKILL to a process's group and waits until it is reaped. The
// exit is expected (not reported on Exited); killing a process that already
// ended is not an error.
func (r *Runner) Kill(ctx context.Context, node, name string) error {
	pr, err := r.lookup("kill", node, name)
	if err != nil {
		return err
	}
	r.mu.Lock()
	pr.stopping = true
	r.mu.Unlock()
	select {
	case <-pr.done:
		return nil
	default:
	}
	if err := syscall.Kill(-pr.res.PGID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s/%s: %w", node, name, err)
	}
	select {
	case <-pr.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill %s/%s: %w", node, name, ctx.Err())
	case <-time.After(5 * time.Second):
		return fmt.Errorf("kill %s/%s (pid %d): not reaped 5s after SIGKILL", node, name, pr.res.PID)
	}
}

// Pause sends SIGSTOP to a process's group.
func (r *Runner) Pause(_ context.Context, node, name string) error {
	return r.signalGroup("pause", node, name, syscall.SIGSTOP)
}

// Resume sends SIGCONT to a process's group.
func (r *Runner) Resume(_ context.Context, node, name string) error {
	return r.signalGroup("resume", node, name, syscall.SIGCONT)
}

func (r *Runner) signalGroup(verb, node, name string, sig syscall.Signal) error {
	pr, err := r.lookup(verb, node, name)
	if err != nil {
		return err
	}
	select {
	case <-pr.done:
		return fmt.Errorf("%s %s/%s: not running", verb, node, name)
	default:
	}
	// The leader is not reaped while done is open, so its group id cannot
	// have been reused.
	if err := syscall.Kill(-pr.res.PGID, sig); err != nil {
		return fmt.Errorf("%s %s/%s (pid %d): %w", verb, node, name, pr.res.PID, err)
	}
	return nil
}

func (r *Runner) lookup(verb, node, name string) (*process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pr := r.procs[node+"/"+name]
	if pr == nil {
		return nil, fmt.Errorf("%s %s/%s: no such process in run %s", verb, node, name, r.RunID)
	}
	return pr, nil
}
