package nfq

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
)

// Rules are the nft rules that queue the node's emulated egress: one table
// (family inet) with an output chain holding, per address family, a rule
// `ip daddr { prefixes } queue num N bypass`. bypass: while no agent
// listens (before Start, after a crash), packets pass unemulated rather
// than being dropped.
type Rules struct {
	Table    string // default "benchnet_linkem"
	Queue    uint16
	Prefixes []netip.Prefix
	// Netns, if set, runs nft in that named namespace (ip netns exec)
	// instead of the caller's.
	Netns string
}

// Argv is the nft commands (argument lists, no shell) that install r, in
// order.
func (r Rules) Argv() [][]string {
	t := r.table()
	out := [][]string{
		{"nft", "add", "table", "inet", t},
		{"nft", "add", "chain", "inet", t, "output", "{", "type", "filter", "hook", "output", "priority", "0", ";", "policy", "accept", ";", "}"},
	}
	for _, fam := range []struct {
		kw string
		v4 bool
	}{{"ip", true}, {"ip6", false}} {
		var set []string
		for _, p := range r.Prefixes {
			if p.Addr().Is4() == fam.v4 {
				set = append(set, p.Masked().String())
			}
		}
		if len(set) == 0 {
			continue
		}
		rule := []string{"nft", "add", "rule", "inet", t, "output", fam.kw, "daddr", "{", strings.Join(set, ", "), "}",
			"queue", "num", strconv.Itoa(int(r.Queue)), "bypass"}
		out = append(out, rule)
	}
	return out
}

func (r Rules) table() string {
	if r.Table == "" {
		return "benchnet_linkem"
	}
	return r.Table
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

// Install replaces the table (a stale one, of an agent that died, goes
// first) and installs the rules; on error it removes what it made.
func (r Rules) Install(ctx context.Context) error {
	if len(r.Prefixes) == 0 {
		return nil
	}
	_ = r.Remove(ctx)
	for _, argv := range r.Argv() {
		if err := r.run(ctx, argv); err != nil {
			_ = r.Remove(context.WithoutCancel(ctx))
			return fmt.Errorf("nfq rules: %w", err)
		}
	}
	return nil
}

// Remove deletes the table (an error when there is none).
func (r Rules) Remove(ctx context.Context) error {
	return r.run(ctx, []string{"nft", "delete", "table", "inet", r.table()})
}
