package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// kindNetnsLink records a /run/netns symlink to a container's network
// namespace: `ip netns exec` and `ip -n` then reach the container by name,
// as they reach the local runner's namespaces. down removes it.
const kindNetnsLink = "netns-link"

// netnsDir is where iproute2 looks up named network namespaces.
const netnsDir = "/run/netns"

// harnessPort names the emulator port of the harness itself (unemulated
// links), as on the local runner.
const harnessPort = "harness"

// UseTAPs makes the run's links the emulator's: no docker network is
// created, each node's container starts with --network none and gets its
// emulator TAP as eth0 with its plan address, and the harness reaches every
// node through its own TAP at the gateway address. Call before Setup.
func (r *Runner) UseTAPs(ports proctable.PortProvider) {
	r.mu.Lock()
	r.ports = ports
	r.mu.Unlock()
}

// attachHarnessTAP addresses the harness's emulator port with the gateway.
// The TAP dies with the emulator's file descriptor.
func (r *Runner) attachHarnessTAP(ctx context.Context) error {
	tap, err := r.ports.AddPort(harnessPort)
	if err != nil {
		return fmt.Errorf("harness port: %w", err)
	}
	gw := netip.PrefixFrom(r.plan.Gateway, r.plan.Subnet.Bits()).String()
	if err := ip(ctx, "addr", "add", gw, "dev", tap); err != nil {
		return fmt.Errorf("harness port: %w", err)
	}
	if err := ip(ctx, "link", "set", tap, "up"); err != nil {
		return fmt.Errorf("harness port: %w", err)
	}
	return nil
}

// attachTAP names the namespace of the node's container (init pid) under
// /run/netns and moves the node's emulator TAP into it as eth0 with the
// node's plan address. The node starts before its link exists (a container
// has no namespace before its process runs); it binds 0.0.0.0 and redials
// its peers, so it only waits.
func (r *Runner) attachTAP(ctx context.Context, node string, pid int) error {
	n := r.plan.Node(node)
	ns := proctable.NetnsName(r.cfg.RunID, node)
	link := filepath.Join(netnsDir, ns)
	if err := r.state.Add(resource{Kind: kindNetnsLink, Name: link, Node: node}); err != nil {
		return err
	}
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("attach %s: %w", node, err)
	}
	if err := removeLink(link); err != nil {
		return fmt.Errorf("attach %s: %w", node, err)
	}
	if err := os.Symlink(fmt.Sprintf("/proc/%d/ns/net", pid), link); err != nil {
		return fmt.Errorf("attach %s: %w", node, err)
	}
	tap, err := r.ports.AddPort(node)
	if err != nil {
		return fmt.Errorf("attach %s: %w", node, err)
	}
	addr := netip.PrefixFrom(n.Addr, r.plan.Subnet.Bits()).String()
	for _, argv := range [][]string{
		{"link", "set", tap, "netns", ns},
		{"-n", ns, "link", "set", tap, "name", "eth0"},
		{"-n", ns, "addr", "add", addr, "dev", "eth0"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "link", "set", "eth0", "up"},
	} {
		if err := ip(ctx, argv...); err != nil {
			return fmt.Errorf("attach %s: %w", node, err)
		}
	}
	return nil
}

// removeLink removes a /run/netns symlink; it refuses anything else (a
// real namespace mount of the same name is not ours to remove).
func removeLink(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s exists and is not a symlink", path)
	}
	return os.Remove(path)
}

// removeNetnsLinks removes the symlinks s records.
func removeNetnsLinks(s *stateFile) error {
	var errs []error
	for _, x := range s.Doc.Resources {
		if x.Kind == kindNetnsLink {
			if err := removeLink(x.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
