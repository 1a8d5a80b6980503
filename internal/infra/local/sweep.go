package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/benchnet/benchnet/internal/infra"
)

// Sweep downs every registered run, then removes whatever still carries
// benchnet's names: namespaces "bn-<6 hex>-…", links "bn<6 hex>br" and
// "bn<6 hex>h<i>", and FORWARD rules commented "benchnet:<6 hex>". Nothing
// else on the host matches those patterns (docker0, docker's vethXXXX).
func Sweep(ctx context.Context) error { return sweep(ctx, "") }

// sweep is Sweep limited to one run id when only is not empty (tests must
// not sweep away other runs on the machine).
func sweep(ctx context.Context, only string) error {
	var errs []error
	states, err := activeRuns()
	if err != nil {
		errs = append(errs, err)
	}
	for id, s := range states {
		if only != "" && id != only {
			continue
		}
		// Through the registry: a run of another runner is taken down by it.
		if err := infra.Down(ctx, s, nil); err != nil {
			errs = append(errs, fmt.Errorf("down %s: %w", s, err))
		}
	}
	mine := func(name, prefix string) bool { return only == "" || strings.HasPrefix(name, prefix+only) }

	out, err := run(ctx, "ip", "netns", "list")
	if err != nil {
		errs = append(errs, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line) // "name (id: 3)"
		if len(f) == 0 || !isOurNetns(f[0]) || !mine(f[0], "bn-") {
			continue
		}
		killNetns(ctx, f[0])
		if err := removeResource(ctx, resource{Kind: kindNetns, Name: f[0]}); err != nil {
			errs = append(errs, err)
		}
	}

	out, err = run(ctx, "ip", "-j", "link", "show")
	if err != nil {
		errs = append(errs, err)
	}
	var links []struct {
		Name string `json:"ifname"`
	}
	if len(out) > 0 {
		if err := json.Unmarshal(out, &links); err != nil {
			errs = append(errs, fmt.Errorf("decode links: %w", err))
		}
	}
	// Veths first: deleting one end deletes its peer, then the bridges.
	for _, pass := range []string{"h", "br"} {
		for _, l := range links {
			if !isOurLink(l.Name) || !mine(l.Name, "bn") || (pass == "br") != strings.HasSuffix(l.Name, "br") {
				continue
			}
			if err := removeResource(ctx, resource{Kind: kindVeth, Name: l.Name}); err != nil {
				errs = append(errs, err)
			}
		}
	}

	for _, rule := range sweepFirewall(ctx, &errs) {
		if !mine(rule[1], "bn") {
			continue
		}
		if err := delFirewall(ctx, rule); err != nil {
			errs = append(errs, fmt.Errorf("remove firewall rule %v: %w", rule, err))
		}
	}
	return errors.Join(errs...)
}

// sweepFirewall lists FORWARD rules that benchnet added (by comment).
func sweepFirewall(ctx context.Context, errs *[]error) [][]string {
	out, err := run(ctx, "iptables", "-w", "-S", "FORWARD")
	if errors.Is(err, exec.ErrNotFound) {
		return nil
	}
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	var rules [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if rule, ok := parseOurRule(line); ok {
			rules = append(rules, rule)
		}
	}
	return rules
}

// parseOurRule turns an `iptables -S` line of one of our rules back into
// the rule specification firewallRule produced.
func parseOurRule(line string) ([]string, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "-A" || f[1] != "FORWARD" {
		return nil, false
	}
	for i := 2; i+1 < len(f); i++ {
		if f[i] != "--comment" {
			continue
		}
		id, ok := strings.CutPrefix(strings.Trim(f[i+1], `"`), "benchnet:")
		if ok && validRunID(id) {
			rule := firewallRule(id)
			return rule, strings.Join(f[2:], " ") == strings.Join(quoteComment(rule), " ")
		}
	}
	return nil, false
}

// quoteComment renders a rule the way `iptables -S` prints it (comments
// are quoted).
func quoteComment(rule []string) []string {
	out := append([]string(nil), rule...)
	for i := range out {
		if i > 0 && out[i-1] == "--comment" {
			out[i] = `"` + out[i] + `"`
		}
	}
	return out
}
