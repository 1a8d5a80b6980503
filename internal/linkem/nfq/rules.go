package nfq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
)

// Rules are the netfilter rules that queue the node's emulated traffic:
// packets to Prefixes, in the output hook, go to queue Queue with bypass
// (while no agent listens, before Start or after a crash, they pass
// unemulated rather than being dropped); with Ingress, packets from
// Prefixes, in the input hook.
//
// Three tools can install them. "netlink" is the agent itself, over
// nftables' netlink API (rules_netlink.go): no binary needed, which a
// FROM-scratch task image has none of; it uses nft's queue where the
// kernel has nft_queue, else the xtables NFQUEUE target through
// nft_compat, as iptables-nft does (this lab's kernel). The exec
// fallbacks: nft needs nft_queue (CONFIG_NFT_QUEUE; here "Could not
// process rule: No such file or directory"); iptables' NFQUEUE target
// (xt_NFQUEUE, also through iptables-nft) works there. Tool "" tries
// netlink, then nft, then iptables.
type Rules struct {
	Tool string // "netlink", "nft", "iptables" or "" (the first that works)
	// Via is how the netlink tool queued (ViaNftQueue, ViaXtNFQUEUE), set
	// by Install.
	Via      string
	Table    string // nft table / iptables chain; default "benchnet_linkem"
	Queue    uint16
	Prefixes []netip.Prefix
	// Ingress queues arriving packets by source (input hook) instead of
	// leaving ones by destination (Config.Ingress says why).
	Ingress bool
	// Netns, if set, runs the tool in that named namespace (ip netns exec)
	// instead of the caller's.
	Netns string
}

func (r Rules) name() string {
	if r.Table == "" {
		return "benchnet_linkem"
	}
	return r.Table
}

// hook is the chain (and nft hook) the rules sit in; addr the header
// field they match ("daddr", "saddr"); flag iptables' address flag.
func (r Rules) hook() (chain, addr, flag string) {
	if r.Ingress {
		return "input", "saddr", "-s"
	}
	return "output", "daddr", "-d"
}

// families splits the prefixes by address family.
func (r Rules) families() (v4, v6 []string) {
	for _, p := range r.Prefixes {
		if p.Addr().Is4() {
			v4 = append(v4, p.Masked().String())
		} else {
			v6 = append(v6, p.Masked().String())
		}
	}
	return v4, v6
}

// NftArgv is the nft commands (argument lists, no shell) that install r:
// one table (inet) with an output chain and a rule per address family,
// `ip daddr { prefixes } queue num N bypass` (input and saddr with
// Ingress).
func (r Rules) NftArgv() [][]string {
	t := r.name()
	hook, addr, _ := r.hook()
	out := [][]string{
		{"nft", "add", "table", "inet", t},
		{"nft", "add", "chain", "inet", t, hook, "{", "type", "filter", "hook", hook, "priority", "0", ";", "policy", "accept", ";", "}"},
	}
	v4, v6 := r.families()
	for _, f := range []struct {
		kw  string
		set []string
	}{{"ip", v4}, {"ip6", v6}} {
		if len(f.set) > 0 {
			out = append(out, []string{"nft", "add", "rule", "inet", t, hook, f.kw, addr, "{", strings.Join(f.set, ", "), "}",
				"queue", "num", strconv.Itoa(int(r.Queue)), "bypass"})
		}
	}
	return out
}

// toolSet is one iptables tool and the prefixes of its family.
type toolSet struct {
	tool string
	set  []string
}

// tools are iptables and ip6tables with their prefixes, each only when it
// has some.
func (r Rules) tools() []toolSet {
	v4, v6 := r.families()
	var out []toolSet
	for _, f := range []toolSet{{"iptables", v4}, {"ip6tables", v6}} {
		if len(f.set) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// IptablesArgv is the iptables (ip6tables) commands that install r: a
// chain of NFQUEUE rules, one per prefix, jumped to first from OUTPUT
// (INPUT with Ingress).
func (r Rules) IptablesArgv() [][]string {
	c := r.chain()
	hook, _, flag := r.hook()
	var out [][]string
	for _, f := range r.tools() {
		out = append(out, []string{f.tool, "-w", "-N", c})
		for _, p := range f.set {
			out = append(out, []string{f.tool, "-w", "-A", c, flag, p, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(int(r.Queue)), "--queue-bypass"})
		}
		out = append(out, []string{f.tool, "-w", "-I", strings.ToUpper(hook), "1", "-j", c})
	}
	return out
}

// chain is the iptables chain: upper case, at most 28 characters.
func (r Rules) chain() string {
	c := strings.ToUpper(r.name())
	return c[:min(len(c), 28)]
}

func (r Rules) run(ctx context.Context, argv []string) error {
	if r.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", r.Netns}, argv...)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// Install installs the rules (after removing stale ones of an agent that
// died) with r.Tool, or nft then iptables, and returns the rules as
// installed (Tool set): Remove those. On error nothing is left.
func (r Rules) Install(ctx context.Context) (Rules, error) {
	if len(r.Prefixes) == 0 {
		return r, nil
	}
	tools := []string{r.Tool}
	if r.Tool == "" {
		tools = []string{"netlink", "nft", "iptables"}
	}
	var errs []error
	for _, tool := range tools {
		r.Tool = tool
		if tool == "netlink" {
			via, err := r.installNetlink()
			if err == nil {
				r.Via = via
				return r, nil
			}
			errs = append(errs, err)
			continue
		}
		_ = r.Remove(ctx)
		argv := r.NftArgv()
		if tool == "iptables" {
			argv = r.IptablesArgv()
		} else if tool != "nft" {
			return r, fmt.Errorf("nfq rules: unknown tool %q (netlink, nft, iptables)", tool)
		}
		err := func() error {
			for _, a := range argv {
				if err := r.run(ctx, a); err != nil {
					return err
				}
			}
			return nil
		}()
		if err == nil {
			return r, nil
		}
		_ = r.Remove(context.WithoutCancel(ctx))
		errs = append(errs, err)
	}
	return r, fmt.Errorf("nfq rules: %w", errors.Join(errs...))
}

// Remove deletes the rules r.Tool installed (an error when there are none).
func (r Rules) Remove(ctx context.Context) error {
	if r.Tool == "netlink" {
		return r.removeNetlink()
	}
	if r.Tool == "nft" {
		return r.run(ctx, []string{"nft", "delete", "table", "inet", r.name()})
	}
	c := r.chain()
	hook, _, _ := r.hook()
	var errs []error
	for _, f := range r.tools() {
		for _, a := range [][]string{{"-D", strings.ToUpper(hook), "-j", c}, {"-F", c}, {"-X", c}} {
			if err := r.run(ctx, append([]string{f.tool, "-w"}, a...)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Describe says how the rules were installed, for the agent's log line:
// "netlink (xt NFQUEUE target)", "iptables (exec)".
func (r Rules) Describe() string {
	if r.Tool == "netlink" {
		return "netlink (" + r.Via + ")"
	}
	return r.Tool + " (exec)"
}
