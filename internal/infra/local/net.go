package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
)

// Resource names carry the run id, so runs never collide and leftovers are
// recognisable: netns "bn-<runid>-<node>", links "bn<runid>br" (bridge) and
// "bn<runid>h<i>" (host side of node i's veth). A run id is 6 hex digits, so
// link names stay within IFNAMSIZ (15).
var (
	ourLinkRe  = regexp.MustCompile(`^bn[0-9a-f]{6}(br|h[0-9]+)$`)
	ourNetnsRe = regexp.MustCompile(`^bn-[0-9a-f]{6}-.+$`)
)

func validRunID(id string) bool { return statefile.ValidRunID(id) }

func bridgeName(runID string) string          { return "bn" + runID + "br" }
func hostVethName(runID string, i int) string { return "bn" + runID + "h" + strconv.Itoa(i) }
func netnsName(runID, node string) string     { return proctable.NetnsName(runID, node) }
func firewallComment(runID string) string     { return "benchnet:" + runID }

// isOurLink and isOurNetns say whether a name can only have come from
// benchnet; Sweep removes exactly those and nothing else (docker0, vethXXX).
func isOurLink(name string) bool  { return ourLinkRe.MatchString(name) }
func isOurNetns(name string) bool { return ourNetnsRe.MatchString(name) }

// ipCmd runs iproute2 with an argument list and returns its combined output
// in the error.
func ipCmd(ctx context.Context, args ...string) error {
	_, err := run(ctx, "ip", args...)
	return err
}

// ipBatch runs several iproute2 commands in one exec (`ip [-n ns] -batch -`),
// which keeps Setup fast on a loaded machine. It stops at the first failure.
func ipBatch(ctx context.Context, ns string, cmds ...[]string) error {
	var script strings.Builder
	for _, c := range cmds {
		for _, a := range c {
			// Batch lines are split on blanks and know quotes and comments:
			// refuse anything that would not survive that as one argument.
			if a == "" || strings.ContainsAny(a, " \t\n\"'#\\") {
				return fmt.Errorf("ip batch: unsafe argument %q", a)
			}
		}
		script.WriteString(strings.Join(c, " ") + "\n")
	}
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	_, err := runInput(ctx, script.String(), "ip", args...)
	return err
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return runInput(ctx, "", name, args...)
}

func runInput(ctx context.Context, stdin, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// gone reports an iproute2/iptables error that means "already absent", so
// teardown stays idempotent.
func gone(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	for _, m := range []string{"Cannot find device", "No such file or directory", "does not exist", "Bad rule", "No chain/target/match"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// checkSubnet refuses a subnet that overlaps any address or route of the
// host: the nodes would shadow (or be shadowed by) real networks.
func checkSubnet(ctx context.Context, subnet netip.Prefix) error {
	if !subnet.IsValid() || !subnet.Addr().Is4() {
		return fmt.Errorf("subnet %s: need an IPv4 prefix", subnet)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("list host addresses: %w", err)
	}
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			return fmt.Errorf("list addresses of %s: %w", ifc.Name, err)
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			p, err := netip.ParsePrefix(ipn.String())
			if err != nil || !p.Addr().Unmap().Is4() {
				continue
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits())
			if p.Masked().Overlaps(subnet) {
				return fmt.Errorf("%w: subnet %s overlaps address %s of host interface %s; %s", infra.ErrSubnetInUse, subnet, p, ifc.Name, subnetHint(ifc.Name))
			}
		}
	}
	out, err := run(ctx, "ip", "-j", "-4", "route", "show", "table", "main")
	if err != nil {
		return fmt.Errorf("list host routes: %w", err)
	}
	var routes []struct {
		Dst string `json:"dst"`
		Dev string `json:"dev"`
	}
	if err := json.Unmarshal(out, &routes); err != nil {
		return fmt.Errorf("decode host routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst == "default" {
			continue
		}
		dst := r.Dst
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			continue
		}
		if p.Overlaps(subnet) {
			return fmt.Errorf("%w: subnet %s overlaps host route %s (dev %s); pick another network.subnet", infra.ErrSubnetInUse, subnet, p, r.Dev)
		}
	}
	return nil
}

// subnetHint says how to free a subnet: when the interface is the bridge of
// another benchnet run, name that run (its run directory when it is still
// registered) and the command that removes it, rather than send the user to
// edit a manifest that is right.
func subnetHint(ifname string) string {
	const other = "pick another network.subnet"
	id, ok := strings.CutPrefix(ifname, "bn")
	if id, ok = strings.CutSuffix(id, "br"); !ok || !isOurLink(ifname) {
		return other
	}
	runs, _ := activeRuns()
	if state, ok := runs[id]; ok {
		return fmt.Sprintf("it is the bridge of benchnet run %s (%s), still up: `benchnet down %s` removes it, or %s", id, filepath.Dir(state), filepath.Dir(state), other)
	}
	return fmt.Sprintf("it is the bridge of benchnet run %s, whose state is gone: `benchnet down --all` removes it, or %s", id, other)
}

// bridgeNetfilter reports whether bridged frames go through iptables
// (br_netfilter loaded with bridge-nf-call-iptables=1). Docker sets FORWARD
// policy DROP, which then drops traffic between two ports of our bridge.
func bridgeNetfilter() bool {
	data, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-iptables")
	return err == nil && strings.TrimSpace(string(data)) == "1"
}

// firewallRule is the rule (after "-I/-D FORWARD") letting a run's bridge
// forward between its own ports. It lives in the host's filter table, so it
// is recorded and removed like any other resource.
func firewallRule(runID string) []string {
	br := bridgeName(runID)
	return []string{"-i", br, "-o", br, "-m", "comment", "--comment", firewallComment(runID), "-j", "ACCEPT"}
}

func addFirewall(ctx context.Context, rule []string) error {
	if _, err := run(ctx, "iptables", append([]string{"-w", "-I", "FORWARD"}, rule...)...); err != nil {
		return fmt.Errorf("allow forwarding on the bridge (br_netfilter is on): %w", err)
	}
	return nil
}

func delFirewall(ctx context.Context, rule []string) error {
	_, err := run(ctx, "iptables", append([]string{"-w", "-D", "FORWARD"}, rule...)...)
	if gone(err) || errors.Is(err, exec.ErrNotFound) {
		return nil
	}
	return err
}

// network is what an attacher needs to join a node to the testnet.
type network struct {
	runID  string
	bridge string
	subnet netip.Prefix
}

// attachFunc connects node n (index i, namespace ns, which exists) to the
// testnet network: afterwards n.Addr is configured in ns and reachable from
// every other node and from the root namespace. It must record every
// resource through rec before creating it. The veth attacher is the default;
// the userspace link emulator will attach with a TAP device instead.
type attachFunc func(ctx context.Context, rec func(resource) error, nw network, n *plan.Node, ns string) error

// attachVeth joins ns to the bridge with a veth pair: the host side
// bn<runid>h<i> on the bridge, the peer created directly inside ns as eth0.
func attachVeth(ctx context.Context, rec func(resource) error, nw network, n *plan.Node, ns string) error {
	host := hostVethName(nw.runID, n.Index)
	if err := rec(resource{Kind: kindVeth, Name: host, Node: n.Name}); err != nil {
		return err
	}
	addr := netip.PrefixFrom(n.Addr, nw.subnet.Bits()).String()
	if err := ipBatch(ctx, "",
		[]string{"link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns},
		[]string{"link", "set", host, "master", nw.bridge, "up"},
	); err != nil {
		return fmt.Errorf("attach %s: %w", n.Name, err)
	}
	if err := ipBatch(ctx, ns,
		[]string{"addr", "add", addr, "dev", "eth0"},
		[]string{"link", "set", "lo", "up"},
		[]string{"link", "set", "eth0", "up"},
	); err != nil {
		return fmt.Errorf("attach %s: %w", n.Name, err)
	}
	return nil
}

// netnsPIDs lists the processes inside a namespace (none if it is gone).
func netnsPIDs(ctx context.Context, ns string) []int {
	out, err := run(ctx, "ip", "netns", "pids", ns)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
