package swarm

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/infra/dockercli"
)

// nodeAddr is where the harness reaches ports a swarm node published: its
// address in the swarm (a manager may report 0.0.0.0 there; its manager
// address then says it).
func (r *Runner) nodeAddr(ctx context.Context, id string) (string, error) {
	r.mu.Lock()
	a, ok := r.addrs[id]
	r.mu.Unlock()
	if ok {
		return a, nil
	}
	out, err := dockercli.Cmd(ctx, "node", "inspect", "--format", "{{.Status.Addr}} {{if .ManagerStatus}}{{.ManagerStatus.Addr}}{{end}}", id)
	if err != nil {
		return "", fmt.Errorf("address of swarm node %s: %w", id, err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", fmt.Errorf("swarm node %s reports no address", id)
	}
	a = f[0]
	if (a == "0.0.0.0" || a == "") && len(f) > 1 {
		if h, _, err := net.SplitHostPort(f[1]); err == nil {
			a = h
		}
	}
	r.mu.Lock()
	r.addrs[id] = a
	r.mu.Unlock()
	return a, nil
}

// ipv4Ports reads a local container's published ports, the IPv4 binding
// of each target port.
func ipv4Ports(ctx context.Context, e dockercli.Engine, container string) ([]port, error) {
	raw, err := e.Cmd(ctx, "inspect", "--type", "container", "--format", "{{json .NetworkSettings.Ports}}", container)
	if err != nil {
		return nil, err
	}
	var bindings map[string][]struct{ HostIp, HostPort string }
	if err := json.Unmarshal(raw, &bindings); err != nil {
		return nil, fmt.Errorf("decode ports of %s: %w", container, err)
	}
	return parseIPv4Ports(bindings), nil
}

// parseIPv4Ports picks, per "26657/tcp" key, the binding on an IPv4 host
// address.
func parseIPv4Ports(bindings map[string][]struct{ HostIp, HostPort string }) []port {
	var out []port
	for key, bs := range bindings {
		target, err := strconv.Atoi(strings.TrimSuffix(key, "/tcp"))
		if err != nil {
			continue
		}
		for _, b := range bs {
			ip, err := netip.ParseAddr(b.HostIp)
			pub, perr := strconv.Atoi(b.HostPort)
			if err == nil && perr == nil && ip.Is4() {
				out = append(out, port{TargetPort: target, PublishedPort: pub})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TargetPort < out[j].TargetPort })
	return out
}

// taskInfo is what Start needs of a running task.
type taskInfo struct {
	ID, NodeID, ContainerID string
	PID                     int
	Ports                   []port
}

type port struct {
	TargetPort, PublishedPort int
}

type taskStatus struct {
	ID     string
	NodeID string
	Status struct {
		State           string
		Message         string
		Err             string
		ContainerStatus struct {
			ContainerID string
			PID         int
			ExitCode    int
		}
		PortStatus struct{ Ports []port }
	}
}

// tasks returns a service's tasks that are meant to run (or, with all,
// every task it still has), newest first as the engine lists them.
func tasks(ctx context.Context, svc string, all bool) ([]taskStatus, error) {
	args := []string{"service", "ps", "--quiet", "--no-trunc"}
	if !all {
		args = append(args, "--filter", "desired-state=running")
	}
	ids, err := dockercli.Cmd(ctx, append(args, svc)...)
	if err != nil {
		return nil, err
	}
	if len(strings.Fields(string(ids))) == 0 {
		return nil, nil
	}
	raw, err := dockercli.Cmd(ctx, append([]string{"inspect", "--type", "task"}, strings.Fields(string(ids))...)...)
	if err != nil {
		return nil, err
	}
	var ts []taskStatus
	if err := json.Unmarshal(raw, &ts); err != nil {
		return nil, fmt.Errorf("decode tasks of %s: %w", svc, err)
	}
	return ts, nil
}

// A task may take long to be reported running on a loaded machine: under
// CI the manager had not reported one after the old 2-minute limit,
// although its node had started 48 s before, and the harness ended it. A
// task the scheduler cannot place says so at once ("no suitable node") and
// is refused sooner.
const (
	taskWait    = 5 * time.Minute
	unplaceable = 20 * time.Second
)

// waitTask waits until the service's task runs.
func waitTask(ctx context.Context, svc string) (taskInfo, error) {
	start := time.Now()
	var unplacedSince time.Time
	for {
		ts, err := tasks(ctx, svc, false)
		if err != nil && !dockercli.NoSuch(err) {
			return taskInfo{}, err
		}
		info, running, waiting, err := taskState(svc, ts)
		switch {
		case err != nil:
			return taskInfo{}, err
		case running:
			return info, nil
		}
		now := time.Now()
		switch {
		case len(ts) == 0 || !strings.HasPrefix(ts[0].Status.Err, noSuitableNode):
			unplacedSince = time.Time{}
		case unplacedSince.IsZero():
			unplacedSince = now
		case now.Sub(unplacedSince) >= unplaceable:
			return taskInfo{}, fmt.Errorf("task of %s cannot be placed for %s: %s (a placement constraint no node meets?)", svc, unplaceable, waiting)
		}
		if now.Sub(start) >= taskWait {
			return taskInfo{}, fmt.Errorf("task of %s not running after %s; last seen: %s", svc, taskWait, waiting)
		}
		select {
		case <-ctx.Done():
			return taskInfo{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// noSuitableNode starts the scheduler's error for a task no node may run.
const noSuitableNode = "no suitable node"

// taskState reads one listing of a service's tasks (newest first): the
// running task, an error for one that ended, or else what the newest one
// waits in, for the message when it never runs.
func taskState(svc string, ts []taskStatus) (info taskInfo, running bool, waiting string, err error) {
	for _, t := range ts {
		switch {
		case t.Status.State == "running":
			return taskInfo{ID: t.ID, NodeID: t.NodeID, ContainerID: t.Status.ContainerStatus.ContainerID,
				PID: t.Status.ContainerStatus.PID, Ports: t.Status.PortStatus.Ports}, true, "", nil
		case taskEnded(t.Status.State):
			return taskInfo{}, false, "", fmt.Errorf("task of %s %s: %s", svc, t.Status.State, t.Status.Err)
		}
	}
	if len(ts) == 0 {
		return taskInfo{}, false, "no task yet", nil
	}
	t := ts[0]
	waiting = t.Status.State
	if t.NodeID != "" {
		waiting += " on swarm node " + shortID(t.NodeID)
	}
	for _, m := range []string{t.Status.Message, t.Status.Err} {
		if m != "" {
			waiting += ": " + m
		}
	}
	return taskInfo{}, false, waiting, nil
}

// shortID is the 12-character form docker prints of an ID.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// taskEnded reports whether a task in state will not run again.
func taskEnded(state string) bool {
	switch state {
	case "failed", "rejected", "complete", "shutdown", "orphaned", "remove":
		return true
	}
	return false
}
