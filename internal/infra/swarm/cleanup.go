package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"sync"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// Check reports why the run is no longer whole: its state file is gone or
// its network was removed.
func (r *Runner) Check() error {
	if !r.state.Exists() {
		return fmt.Errorf("state file %s is gone", r.cfg.StatePath)
	}
	if _, err := dockercli.Cmd(context.Background(), "network", "inspect", "--format", "{{.Name}}", NetworkName(r.cfg.RunID)); err != nil {
		return fmt.Errorf("network %s is gone", NetworkName(r.cfg.RunID))
	}
	return nil
}

// Cleanup removes every service, network and volume of the run; idempotent.
func (r *Runner) Cleanup(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	stop, done := r.stopWatch, r.watchDone
	r.mu.Unlock()
	r.starting.Wait()
	if stop != nil {
		stop()
		<-done
	}
	werr := r.stopWriters(ctx)
	r.mu.Lock()
	var logs []*exec.Cmd
	for _, s := range r.nodes {
		logs = append(logs, s.logs)
		s.logs = nil
	}
	r.mu.Unlock()
	for _, l := range logs {
		stopLogs(l)
	}
	err := errors.Join(werr, dockercli.Default.RemoveLabelled(ctx, r.label(), stopGrace))
	r.mu.Lock()
	engines := r.engines
	r.mu.Unlock()
	err = errors.Join(err, removeOnEngines(ctx, engines, r.label()))
	if err == nil {
		r.state.Clear()
		err = errors.Join(r.state.Save(), proctable.Unregister(r.cfg.RunID))
	}
	return err
}

// stopWriters stops, together, every running task that writes out volumes
// (a gossip host flushes its trace at SIGTERM) and copies them back, before
// Cleanup removes the volumes with everything else.
func (r *Runner) stopWriters(ctx context.Context) error {
	r.mu.Lock()
	var ws []*service
	for _, s := range r.nodes {
		if s.running && s.spec != nil && slices.ContainsFunc(s.spec.volumes, func(v volume) bool { return v.out }) {
			ws = append(ws, s)
		}
	}
	r.mu.Unlock()
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, s := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.scaleDown(ctx, s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// engineOf is the engine of a swarm node (the default one when none was
// found: Setup refused that for every node that may get a task).
func (r *Runner) engineOf(nodeID string) dockercli.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.engines[nodeID]
}

// removeOnEngines removes what the run left on the swarm's other engines:
// task containers not gone yet, the home volumes (a manager cannot remove
// another engine's volumes), networks.
func removeOnEngines(ctx context.Context, engines map[string]dockercli.Engine, label string) error {
	var errs []error
	for _, id := range sortedKeys(engines) {
		e := engines[id]
		if e.IsDefault() {
			continue
		}
		if err := e.RemoveLabelled(ctx, label, stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("swarm node %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Down ends a run from its state file: the docker runner's down on this
// engine (a live harness is asked first; services, containers, networks,
// volumes by label), then the same on every other engine the run recorded.
func Down(ctx context.Context, statePath string, log io.Writer) error {
	s, err := statefile.Read(statePath)
	if err != nil {
		return err
	}
	engines := map[string]dockercli.Engine{}
	for _, res := range s.Doc.Resources {
		if res.Kind == kindEngine {
			engines[res.Node] = engineFromState(res.Name)
		}
	}
	err = dockercli.Down(ctx, statePath, log, dockercli.HarnessGrace, func(ctx context.Context, s *statefile.File) error {
		return dockercli.Teardown(ctx, s, stopGrace, nil)
	})
	return errors.Join(err, removeOnEngines(ctx, engines, dockercli.Label+"="+s.Doc.RunID))
}
