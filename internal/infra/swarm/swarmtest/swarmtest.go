// Package swarmtest builds a Docker swarm of several engines on one machine
// for tests and demos, in the style of kind for Kubernetes: the host's
// engine is the manager, and each worker is a dockerd of its own in its own
// network namespace, joined to the swarm over a veth on a bridge of the
// host. Every piece is torn down by t.Cleanup, registered as it is made,
// so a failing test leaves nothing behind either: the workers leave the
// swarm and stop, the manager leaves the swarm it made, and namespaces,
// links, the firewall rule and data roots go.
//
// Workers run `nsenter --net=<ns> dockerd`, not `ip netns exec`: the latter
// remounts /sys for the namespace and the engine then finds no cgroup
// mounts ("Devices cgroup isn't mounted"). Each gets an empty config file
// (the host's /etc/docker/daemon.json pins data-root) and fuse-overlayfs,
// which works on any backing filesystem.
package swarmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

// Options shape a cluster.
type Options struct {
	// Workers is the number of engines besides the host's (default 2).
	Workers int
	// Zones, when set, label engine i (0 = the manager) with
	// benchnet.zone=Zones[i % len(Zones)].
	Zones []string
	// Log receives progress lines (default: the test log).
	Log func(format string, args ...any)
}

// Engine is one dockerd of the cluster.
type Engine struct {
	Name   string // "manager" or "w1", "w2", …
	Host   string // DOCKER_HOST value; "" for the host's own engine
	NodeID string // its swarm node id
	Addr   string // its address on the cluster bridge
	Zone   string
	Netns  string // its network namespace ("" for the manager)
	PID    int    // its dockerd's pid (0 for the manager)
	Dir    string // its data root, config and log ("" for the manager)
}

// Cluster is a running multi-engine swarm.
type Cluster struct {
	Manager Engine
	Workers []Engine
	Bridge  string
	Subnet  netip.Prefix
}

// Engines lists the manager first, then the workers.
func (c *Cluster) Engines() []Engine { return append([]Engine{c.Manager}, c.Workers...) }

// Hosts are the workers' DOCKER_HOST values (the manager is the default engine).
func (c *Cluster) Hosts() []string {
	var h []string
	for _, w := range c.Workers {
		h = append(h, w.Host)
	}
	return h
}

// ZoneLabel is the swarm node label zones are placed by (swarm.ZoneLabel).
const ZoneLabel = "benchnet.zone"

// Commands are the host commands a cluster needs.
var Commands = []struct{ Cmd, Pkg string }{
	{"docker", "docker.io"}, {"dockerd", "docker.io"}, {"nsenter", "util-linux"},
	{"ip", "iproute2"}, {"iptables", "iptables"}, {"fuse-overlayfs", "fuse-overlayfs"},
}

// New builds a cluster for t and registers its teardown. It skips (fails
// under CI) without root or the commands, and when the host's engine is
// already in a swarm (the helper leaves the host's engine as it found it,
// and a swarm it did not make is not its to change).
func New(t testing.TB, o Options) *Cluster {
	t.Helper()
	testenv.NeedRoot(t)
	for _, c := range Commands {
		testenv.NeedCommand(t, c.Cmd, c.Pkg)
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	logf := o.Log
	if logf == nil {
		logf = t.Logf
	}
	ctx := context.Background()
	state, err := docker(ctx, "", "info", "--format", "{{.Swarm.LocalNodeState}}")
	if err != nil {
		testenv.Skip(t, "swarmtest: no Docker engine answers: %v", err)
	}
	if s := strings.TrimSpace(state); s != "inactive" {
		testenv.Skip(t, "swarmtest: the host's Docker engine is already in a swarm (state %q); the helper only builds its own", s)
	}
	c, err := build(ctx, t, o, logf)
	if err != nil {
		t.Fatalf("swarmtest: %v", err)
	}
	return c
}

// tag is unique per process, short enough for interface names (15 bytes).
func tag() string { return "bnsw" + strconv.Itoa(os.Getpid()%100000) }

func build(ctx context.Context, t testing.TB, o Options, logf func(string, ...any)) (*Cluster, error) {
	id := tag()
	c := &Cluster{Bridge: id + "b"}
	subnet, err := freeSubnet(ctx)
	if err != nil {
		return nil, err
	}
	c.Subnet = subnet
	gw := subnet.Addr().Next()
	zone := func(i int) string {
		if len(o.Zones) == 0 {
			return ""
		}
		return o.Zones[i%len(o.Zones)]
	}

	// The bridge, with the host's end of it the manager's address.
	if err := run(ctx, "ip", "link", "add", c.Bridge, "type", "bridge"); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = run(context.Background(), "ip", "link", "del", c.Bridge) })
	if err := run(ctx, "ip", "addr", "add", netip.PrefixFrom(gw, subnet.Bits()).String(), "dev", c.Bridge); err != nil {
		return nil, err
	}
	if err := run(ctx, "ip", "link", "set", c.Bridge, "up"); err != nil {
		return nil, err
	}
	// Docker's FORWARD policy is DROP, and with br_netfilter loaded bridged
	// frames between two workers (their VXLAN and gossip) pass it.
	rule := []string{"-i", c.Bridge, "-o", c.Bridge, "-j", "ACCEPT", "-m", "comment", "--comment", "benchnet-swarmtest:" + id}
	if err := run(ctx, "iptables", append([]string{"-w", "-I", "FORWARD"}, rule...)...); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = run(context.Background(), "iptables", append([]string{"-w", "-D", "FORWARD"}, rule...)...) })

	// The manager: the host's engine. docker_gwbridge outlives a swarm
	// leave; it goes again only if the swarm made it.
	_, gwErr := docker(ctx, "", "network", "inspect", "docker_gwbridge")
	hadGWBridge := gwErr == nil
	logf("swarmtest: swarm init on the host's engine, advertising %s", gw)
	// A worker's heartbeat every 30 s, not 5: all engines share this
	// machine's 2 cores, and under a 200-node testnet (load ~90) the
	// manager marked a worker Down after a few missed beats and shut its
	// tasks down (BenchmarkSwarm200, 2026-11-30).
	if _, err := docker(ctx, "", "swarm", "init", "--advertise-addr", gw.String(), "--listen-addr", gw.String()+":2377",
		"--dispatcher-heartbeat", "30s"); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		// Services first: a swarm left with services running keeps their
		// containers until the engine notices.
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if ids, err := docker(cctx, "", "service", "ls", "--quiet"); err == nil && strings.TrimSpace(ids) != "" {
			_, _ = docker(cctx, "", append([]string{"service", "rm"}, strings.Fields(ids)...)...)
		}
		if _, err := docker(cctx, "", "swarm", "leave", "--force"); err != nil {
			t.Errorf("swarmtest: manager leaves the swarm: %v", err)
		}
		if !hadGWBridge {
			_, _ = docker(cctx, "", "network", "rm", "docker_gwbridge")
		}
	})
	mid, err := docker(ctx, "", "info", "--format", "{{.Swarm.NodeID}}")
	if err != nil {
		return nil, err
	}
	c.Manager = Engine{Name: "manager", NodeID: strings.TrimSpace(mid), Addr: gw.String(), Zone: zone(0)}
	token, err := docker(ctx, "", "swarm", "join-token", "--quiet", "worker")
	if err != nil {
		return nil, err
	}

	addr := gw
	for i := 1; i <= o.Workers; i++ {
		addr = addr.Next()
		if !subnet.Contains(addr) {
			return nil, fmt.Errorf("subnet %s too small for %d workers", subnet, o.Workers)
		}
		w, err := startWorker(ctx, t, id, i, addr, subnet.Bits(), c.Bridge, logf)
		if err != nil {
			return nil, err
		}
		w.Zone = zone(i)
		logf("swarmtest: %s joins the swarm", w.Name)
		if _, err := docker(ctx, w.Host, "swarm", "join", "--token", strings.TrimSpace(token),
			"--advertise-addr", w.Addr, "--listen-addr", w.Addr+":2377", gw.String()+":2377"); err != nil {
			return nil, fmt.Errorf("%s joins: %w", w.Name, err)
		}
		nid, err := docker(ctx, w.Host, "info", "--format", "{{.Swarm.NodeID}}")
		if err != nil {
			return nil, err
		}
		w.NodeID = strings.TrimSpace(nid)
		c.Workers = append(c.Workers, w)
	}
	for _, e := range c.Engines() {
		if e.Zone == "" {
			continue
		}
		if _, err := docker(ctx, "", "node", "update", "--label-add", ZoneLabel+"="+e.Zone, e.NodeID); err != nil {
			return nil, fmt.Errorf("label %s: %w", e.Name, err)
		}
	}
	// Every node ready before the first service is placed.
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := docker(ctx, "", "node", "ls", "--format", "{{.Status}}")
		if err == nil && strings.Count(out, "Ready") == len(c.Workers)+1 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("swarm nodes not ready after 60s: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return c, nil
}

// startWorker makes worker i's namespace, link and engine.
func startWorker(ctx context.Context, t testing.TB, id string, i int, addr netip.Addr, bits int, bridge string, logf func(string, ...any)) (Engine, error) {
	name := "w" + strconv.Itoa(i)
	ns := id + "-" + name
	hostIf := id + "h" + strconv.Itoa(i)
	w := Engine{Name: name, Netns: ns, Addr: addr.String()}
	if err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return w, err
	}
	t.Cleanup(func() { _ = run(context.Background(), "ip", "netns", "del", ns) })
	if err := run(ctx, "ip", "link", "add", hostIf, "type", "veth", "peer", "name", "eth0", "netns", ns); err != nil {
		return w, err
	}
	t.Cleanup(func() { _ = run(context.Background(), "ip", "link", "del", hostIf) })
	for _, args := range [][]string{
		{"link", "set", hostIf, "master", bridge, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", netip.PrefixFrom(addr, bits).String(), "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
	} {
		if err := run(ctx, "ip", args...); err != nil {
			return w, err
		}
	}

	dir, err := os.MkdirTemp("/var/tmp", "benchnet-swarmtest-"+name+"-")
	if err != nil {
		return w, err
	}
	w.Dir = dir
	execRoot := filepath.Join("/run", ns)
	t.Cleanup(func() {
		// Overlay mounts under the data root go with their containers;
		// anything still mounted is unmounted before the removal.
		unmountUnder(dir)
		unmountUnder(execRoot)
		_ = os.RemoveAll(dir)
		_ = os.RemoveAll(execRoot)
	})
	cfg := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o644); err != nil {
		return w, err
	}
	sock := filepath.Join(execRoot, "docker.sock")
	w.Host = "unix://" + sock
	logPath := filepath.Join(dir, "dockerd.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return w, err
	}
	defer lf.Close()
	cmd := exec.Command("nsenter", "--net=/var/run/netns/"+ns, "dockerd",
		"--config-file", cfg, "--data-root", filepath.Join(dir, "data"), "--exec-root", execRoot,
		"-H", w.Host, "--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--storage-driver", "fuse-overlayfs", "--iptables=false", "--ip-masq=false")
	cmd.Stdout, cmd.Stderr = lf, lf
	// Its own process group: a Ctrl-C of the test reaches the cleanup,
	// not the engine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf("swarmtest: start %s's dockerd in %s (%s)", name, ns, w.Host)
	if err := cmd.Start(); err != nil {
		return w, fmt.Errorf("start dockerd of %s: %w", name, err)
	}
	w.PID = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// Leaving first, so the manager can drop the node; then the engine
		// stops its containers and its containerd on SIGTERM.
		_, _ = docker(cctx, w.Host, "swarm", "leave", "--force")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		killNetns(ns) // a shim or proxy the engine left
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := docker(ctx, w.Host, "version", "--format", "{{.Server.Version}}"); err == nil {
			return w, nil
		}
		select {
		case <-exited:
			return w, fmt.Errorf("dockerd of %s ended while starting: %s", name, tail(logPath))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return w, fmt.Errorf("dockerd of %s not answering after 60s: %s", name, tail(logPath))
		}
	}
}

// freeSubnet picks a /24 of 192.168.240.0/20 that no host route touches.
func freeSubnet(ctx context.Context) (netip.Prefix, error) {
	out, err := exec.CommandContext(ctx, "ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("ip route: %w", err)
	}
	var used []netip.Prefix
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		for _, w := range f {
			if p, err := netip.ParsePrefix(w); err == nil {
				used = append(used, p)
			} else if a, err := netip.ParseAddr(w); err == nil && a.Is4() {
				used = append(used, netip.PrefixFrom(a, 32))
			}
		}
	}
	for third := 240; third < 256; third++ {
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 168, byte(third), 0}), 24)
		free := true
		for _, u := range used {
			if u.Overlaps(cand) {
				free = false
				break
			}
		}
		if free {
			return cand, nil
		}
	}
	return netip.Prefix{}, errors.New("no free /24 in 192.168.240.0/20 for the cluster bridge")
}

// killNetns SIGKILLs whatever still runs in a namespace.
func killNetns(ns string) {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && (f[1] == dir || strings.HasPrefix(f[1], dir+"/")) {
			points = append(points, f[1])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		_ = syscall.Unmount(points[i], syscall.MNT_DETACH)
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}

// run execs a command with an argument list; the error carries its output.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// docker runs the CLI against host ("" = the default engine).
func docker(ctx context.Context, host string, args ...string) (string, error) {
	if host != "" {
		args = append([]string{"-H", host}, args...)
	}
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Docker runs the docker CLI against one engine of the cluster.
func (e Engine) Docker(ctx context.Context, args ...string) (string, error) {
	return docker(ctx, e.Host, args...)
}
