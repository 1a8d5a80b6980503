package local

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/plan"
)

// harnessPort names the emulator port of the harness itself: it gets
// unemulated links, so RPC and scrapes measure the nodes, not the emulation.
const harnessPort = "harness"

// UseTAPs makes Setup attach every node through ports instead of a veth: the
// node's eth0 is a TAP whose other end is the emulator, and the bridge keeps
// only the harness's own TAP, so the harness still reaches every node at the
// gateway address. Call before Setup.
func (r *Runner) UseTAPs(ports proctable.PortProvider) {
	r.ports = ports
	r.attach = r.attachTAP
}

// attachHarnessTAP puts the harness's emulator port on the bridge.
func (r *Runner) attachHarnessTAP(ctx context.Context, br string) error {
	tap, err := r.ports.AddPort(harnessPort)
	if err != nil {
		return fmt.Errorf("harness port: %w", err)
	}
	if err := r.state.Add(resource{Kind: kindVeth, Name: tap}); err != nil {
		return err
	}
	if err := ipBatch(ctx, "", []string{"link", "set", tap, "master", br, "up"}); err != nil {
		return fmt.Errorf("harness port: %w", err)
	}
	return nil
}

// attachTAP moves the node's emulator TAP into its namespace as eth0. The
// TAP dies with the emulator's file descriptor, so after a kill -9 only the
// namespace (recorded) is left to remove.
func (r *Runner) attachTAP(ctx context.Context, rec func(resource) error, nw network, n *plan.Node, ns string) error {
	tap, err := r.ports.AddPort(n.Name)
	if err != nil {
		return fmt.Errorf("attach %s: %w", n.Name, err)
	}
	if err := ipBatch(ctx, "", []string{"link", "set", tap, "netns", ns}); err != nil {
		return fmt.Errorf("attach %s: %w", n.Name, err)
	}
	addr := netip.PrefixFrom(n.Addr, nw.subnet.Bits()).String()
	if err := ipBatch(ctx, ns,
		[]string{"link", "set", tap, "name", "eth0"},
		[]string{"addr", "add", addr, "dev", "eth0"},
		[]string{"link", "set", "lo", "up"},
		[]string{"link", "set", "eth0", "up"},
	); err != nil {
		return fmt.Errorf("attach %s: %w", n.Name, err)
	}
	return nil
}

// NetnsName is the network namespace of a node of run runID, for tools that
// act inside it (tc rules of the netem backend, ping in tests).
func NetnsName(runID, node string) string { return netnsName(runID, node) }
