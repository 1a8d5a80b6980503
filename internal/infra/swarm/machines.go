package swarm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/dockercli"
	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// Each machine of the swarm runs the benchnet binary's machine exporter as
// one global service (a task on every node), published in host mode like
// the nodes' ports, so the collector reads every machine's load and CPU as
// its own series (issue 32 item 7). The service is best effort: a machine
// whose exporter does not run has no series, and the run goes on.

// exporterPort is the exporter's port inside its task.
const exporterPort = 9100

// exporterWait bounds how long MachineMetrics waits for the exporters'
// tasks: they start with the testnet and run long before the collector.
const exporterWait = 60 * time.Second

// errNoExporter: no benchnet binary to run (a Go test binary drives the
// runner), so no machine is watched; not an error of the run.
var errNoExporter = errors.New("no benchnet binary for the machine exporters")

func exporterService(runID string) string { return "benchnet-" + runID + "-machines" }

// startExporters creates the global exporter service without waiting for
// its tasks; the image is the benchnet binary (Config.Executable), loaded
// on every engine the run drives.
func (r *Runner) startExporters(ctx context.Context, network string) error {
	exe := r.cfg.Executable
	if exe == "" {
		return errNoExporter
	}
	image, err := dockercli.EnsureImage(ctx, exe)
	if err != nil {
		return fmt.Errorf("machine exporter: %w", err)
	}
	r.mu.Lock()
	engines := r.engines
	r.mu.Unlock()
	for _, id := range sortedKeys(engines) {
		if err := r.images.ensure(ctx, engines[id], image); err != nil {
			return fmt.Errorf("machine exporter: %w", err)
		}
	}
	svc := exporterService(r.cfg.RunID)
	if err := r.state.Add(statefile.Resource{Kind: kindService, Name: "machine-exporter", Service: svc}); err != nil {
		return err
	}
	_, err = dockercli.Cmd(ctx, "service", "create", "--detach", "--quiet", "--no-resolve-image", "--mode", "global",
		"--name", svc, "--label", r.label(), "--container-label", r.label(), "--network", network,
		"--restart-condition", "none", "--stop-grace-period", stopGrace.String(),
		"--publish", "mode=host,target="+strconv.Itoa(exporterPort),
		"--entrypoint", quoteWords([]string{exe}), image,
		"node", "machine-exporter", "--listen", ":"+strconv.Itoa(exporterPort))
	if err != nil {
		return fmt.Errorf("machine exporter: create service %s: %w", svc, err)
	}
	return nil
}

var _ infra.MachineWatcher = (*Runner)(nil)

// MachineMetrics waits until every ready, active swarm node runs its
// exporter task (or exporterWait passed) and reports where each answers,
// named by the node's hostname (with its short id when hostnames repeat,
// as on several engines of one machine). A machine whose task failed is
// left out and named in the error beside the others' endpoints.
func (r *Runner) MachineMetrics(ctx context.Context) ([]infra.MachineMetrics, error) {
	r.mu.Lock()
	serr := r.exporterErr
	r.mu.Unlock()
	switch {
	case errors.Is(serr, errNoExporter):
		return nil, nil
	case serr != nil:
		return nil, serr
	}
	nodes, err := listNodes(ctx)
	if err != nil {
		return nil, err
	}
	names := machineNames(nodes)
	want := map[string]bool{}
	for _, n := range nodes {
		if n.Ready && n.Active {
			want[n.ID] = true
		}
	}
	svc := exporterService(r.cfg.RunID)
	deadline := time.Now().Add(exporterWait)
	for {
		ts, err := tasks(ctx, svc, true)
		if err != nil {
			return nil, fmt.Errorf("machine exporters: %w", err)
		}
		running, failed := map[string]taskStatus{}, map[string]string{}
		for _, t := range ts {
			switch {
			case t.Status.State == "running":
				running[t.NodeID] = t
			case taskEnded(t.Status.State):
				if _, ok := running[t.NodeID]; !ok {
					failed[t.NodeID] = t.Status.State + ": " + t.Status.Err
				}
			}
		}
		settled := true
		for id := range want {
			if _, ok := running[id]; !ok && failed[id] == "" {
				settled = false
			}
		}
		if settled || time.Now().After(deadline) {
			return r.exporterEndpoints(ctx, names, want, running, failed)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (r *Runner) exporterEndpoints(ctx context.Context, names map[string]string, want map[string]bool, running map[string]taskStatus, failed map[string]string) ([]infra.MachineMetrics, error) {
	var out []infra.MachineMetrics
	var missing []string
	for _, id := range sortedKeys(want) {
		t, ok := running[id]
		if !ok {
			why := failed[id]
			if why == "" {
				why = "not running after " + exporterWait.String()
			}
			missing = append(missing, names[id]+" ("+why+")")
			continue
		}
		ports := t.Status.PortStatus.Ports
		if c := t.Status.ContainerStatus.ContainerID; c != "" {
			if p, err := ipv4Ports(ctx, r.engineOf(id), c); err == nil && len(p) > 0 {
				ports = p
			}
		}
		host, err := r.nodeAddr(ctx, id)
		if err != nil {
			missing = append(missing, names[id]+" ("+err.Error()+")")
			continue
		}
		url := ""
		for _, p := range ports {
			if p.TargetPort == exporterPort {
				url = "http://" + net.JoinHostPort(host, strconv.Itoa(p.PublishedPort)) + "/metrics"
			}
		}
		if url == "" {
			missing = append(missing, names[id]+" (no published port)")
			continue
		}
		out = append(out, infra.MachineMetrics{Name: names[id], URL: url})
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("machine exporters: no series of %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// machineNames names each swarm node by its hostname, adding its short id
// to hostnames that repeat.
func machineNames(nodes []swarmNode) map[string]string {
	count := map[string]int{}
	for _, n := range nodes {
		count[n.Hostname]++
	}
	names := map[string]string{}
	for _, n := range nodes {
		name := n.Hostname
		if name == "" || count[name] > 1 {
			name = strings.TrimPrefix(name+"-", "-") + shortID(n.ID)
		}
		names[n.ID] = name
	}
	return names
}
