package swarmtest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	dockerrunner "github.com/benchnet/benchnet/internal/infra/docker"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
)

// TestCluster: a 3-engine swarm runs a global service's task on every
// engine, with each engine's zone label; afterwards nothing of it is left
// (namespaces, links, firewall rule, engines, the host's swarm).
func TestCluster(t *testing.T) {
	_, bin := testrel.NeedCometBFT(t, "v1.0.1")
	var c *Cluster
	t.Run("up", func(t *testing.T) {
		c = New(t, Options{Workers: 2, Zones: []string{"z0", "z1", "z2"}})
		ctx := context.Background()
		ref, err := dockerrunner.EnsureImage(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.Workers {
			save := exec.Command("docker", "save", ref)
			load := exec.Command("docker", "-H", w.Host, "load", "--quiet")
			pipe, err := save.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			load.Stdin = pipe
			if err := save.Start(); err != nil {
				t.Fatal(err)
			}
			if out, err := load.CombinedOutput(); err != nil {
				t.Fatalf("load into %s: %v: %s", w.Name, err, out)
			}
			if err := save.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Manager.Docker(ctx, "service", "create", "--detach", "--quiet", "--name", "swarmtest-probe",
			"--mode", "global", "--restart-condition", "none", "--no-resolve-image",
			"--entrypoint", bin, ref, "version"); err != nil {
			t.Fatal(err)
		}
		nodes := map[string]string{}
		for _, e := range c.Engines() {
			zone, err := c.Manager.Docker(ctx, "node", "inspect", "--format", `{{index .Spec.Labels "`+ZoneLabel+`"}}`, e.NodeID)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(zone); got != e.Zone {
				t.Errorf("%s: zone label %q, want %q", e.Name, got, e.Zone)
			}
			nodes[e.NodeID] = e.Name
		}
		if len(nodes) != 3 {
			t.Fatalf("want 3 distinct swarm nodes, got %v", nodes)
		}
		// One completed task per engine: each pulled nothing, ran the binary.
		done := map[string]bool{}
		for try := 0; try < 300 && len(done) < 3; try++ {
			ids, _ := c.Manager.Docker(ctx, "service", "ps", "--quiet", "--no-trunc", "swarmtest-probe")
			if len(strings.Fields(ids)) == 0 {
				continue
			}
			out, _ := c.Manager.Docker(ctx, append([]string{"inspect", "--type", "task", "--format", "{{.NodeID}} {{.Status.State}}"}, strings.Fields(ids)...)...)
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[1] == "complete" {
					done[nodes[f[0]]] = true
				}
			}
			if len(done) < 3 {
				time.Sleep(200 * time.Millisecond)
			}
		}
		if len(done) != 3 {
			out, _ := c.Manager.Docker(ctx, "service", "ps", "--no-trunc", "swarmtest-probe")
			t.Fatalf("want a completed task on each of 3 engines, got %v:\n%s", done, out)
		}
	})
	if c == nil {
		return
	}
	// What the cleanup must have removed.
	if out, _ := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output(); strings.TrimSpace(string(out)) != "inactive" {
		t.Errorf("host engine swarm state %q after the cluster, want inactive", strings.TrimSpace(string(out)))
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), tag()) {
		t.Errorf("namespaces left: %s", out)
	}
	if out, _ := exec.Command("ip", "-br", "link").Output(); strings.Contains(string(out), tag()) {
		t.Errorf("links left: %s", out)
	}
	if out, _ := exec.Command("iptables", "-w", "-S", "FORWARD").Output(); strings.Contains(string(out), "benchnet-swarmtest:"+tag()) {
		t.Errorf("firewall rule left: %s", out)
	}
	for _, w := range c.Workers {
		if err := syscall.Kill(w.PID, 0); err == nil {
			t.Errorf("dockerd of %s (pid %d) still running", w.Name, w.PID)
		}
		for _, d := range []string{"/run/" + w.Netns, w.Dir} {
			if _, err := os.Stat(d); err == nil {
				t.Errorf("%s of %s left", d, w.Name)
			}
		}
	}
}
