package linkem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Netem rule layout on each node's device (inside its namespace):
//
//	root 1: htb, default class 1:2
//	  1:1  the node's uplink, rate = egress rate (UnlimitedRate if none)
//	    1:2        unemulated traffic (harness, addresses outside the plan)
//	    1:10, 1:11 … one class per distinct link condition towards peers, each
//	               with a netem leaf (delay, jitter, loss)
//	u32 filters: one per peer, matching the peer's address to the class of
//	ITS condition (for a plain zone matrix: its zone), so every ordered pair
//	(A, B) gets delay(zone A, zone B). CometBFT's e2e generator skips the
//	wrong nodes here; TestNetemEveryPairHitsItsDelay checks every pair.
//
// Child classes share the uplink's rate by borrowing (rate = ceil = uplink).
const (
	// UnlimitedRate stands in for "no limit" because htb needs a rate.
	UnlimitedRate = 10_000_000_000
	// NetemLimit is each netem leaf's queue in packets (tc default 1000 is
	// too short for a fast link with a long delay).
	NetemLimit = 10000
	firstClass = 0x10
)

// NetemConfig says where each node's rules go.
type NetemConfig struct {
	// Dev is the node's device inside its namespace (default "eth0").
	Dev string
	// Netns names a node's network namespace.
	Netns func(node string) string
	// Exec runs one command (default: exec without a shell).
	Exec func(ctx context.Context, argv []string) error
}

// NetemRules returns the commands that install node i's egress rules, in
// order, each an argument list starting with "ip netns exec NS tc".
func NetemRules(s *Snapshot, i int, dev, netns string) [][]string {
	src := s.Nodes[i]
	tc := func(args ...string) []string {
		return append([]string{"ip", "netns", "exec", netns, "tc"}, args...)
	}
	rate := src.Rate
	if rate == 0 {
		rate = UnlimitedRate
	}
	r := FormatRate(rate)
	cmds := [][]string{
		tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "2"),
		tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", r, "ceil", r),
		tc("class", "add", "dev", dev, "parent", "1:1", "classid", "1:2", "htb", "rate", r, "ceil", r),
	}
	var conds []Link
	var filters [][]string
	for j, dst := range s.Nodes {
		if j == i {
			continue
		}
		l := s.Links[i][j]
		k := slices.Index(conds, l)
		if k < 0 {
			k = len(conds)
			conds = append(conds, l)
		}
		cls := "1:" + strconv.FormatUint(uint64(firstClass+k), 16)
		proto, match, bits := "ip", "ip", "/32"
		if dst.Addr.Is6() {
			proto, match, bits = "ipv6", "ip6", "/128"
		}
		filters = append(filters, tc("filter", "add", "dev", dev, "parent", "1:", "protocol", proto,
			"prio", "1", "u32", "match", match, "dst", dst.Addr.String()+bits, "flowid", cls))
	}
	for k, l := range conds {
		id := strconv.FormatUint(uint64(firstClass+k), 16)
		cmds = append(cmds, tc("class", "add", "dev", dev, "parent", "1:1", "classid", "1:"+id, "htb", "rate", r, "ceil", r))
		ne := []string{"qdisc", "add", "dev", dev, "parent", "1:" + id, "handle", id + ":", "netem",
			"limit", strconv.Itoa(NetemLimit), "delay", tcTime(l.Delay)}
		if l.Jitter > 0 {
			ne = append(ne, tcTime(l.Jitter), "distribution", "normal")
		}
		if l.Loss > 0 {
			ne = append(ne, "loss", strconv.FormatFloat(l.Loss*100, 'f', -1, 64)+"%")
		}
		cmds = append(cmds, tc(ne...))
	}
	return append(cmds, filters...)
}

// tcTime renders a duration as tc reads it: whole ms when exact, else µs.
func tcTime(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatInt(d.Microseconds(), 10) + "us"
}

// Netem is the kernel backend: tc htb + netem + u32 rules in every node's
// namespace. It needs a kernel with sch_netem (see Detect).
type Netem struct {
	cfg NetemConfig

	mu      sync.Mutex
	applied map[string][][]string // node → commands last installed
}

// NewNetem returns the kernel backend.
func NewNetem(cfg NetemConfig) *Netem {
	if cfg.Dev == "" {
		cfg.Dev = "eth0"
	}
	if cfg.Exec == nil {
		cfg.Exec = func(ctx context.Context, argv []string) error { _, err := run(ctx, argv...); return err }
	}
	return &Netem{cfg: cfg, applied: map[string][][]string{}}
}

func (*Netem) Name() string { return KindNetem }

// Apply installs every node's rules, replacing (delete root, add again) only
// those of nodes whose rules changed since the last Apply. A replaced node's
// link is unshaped for the few milliseconds the tc calls take.
//
// Apply is all or nothing: when a command fails, every node it changed gets
// its previous rules back (ErrRolledBack in the error), so a half-applied
// partition or heal never leaves some links new and others old. Only when
// the rollback fails too are links left mixed, and the error says which.
func (n *Netem) Apply(ctx context.Context, m *Model) error {
	if n.cfg.Netns == nil {
		return errors.New("linkem netem: no namespace naming (NetemConfig.Netns)")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := m.Snapshot()
	var touched []string // nodes whose rules this call removed or added
	prev := map[string][][]string{}
	for i, node := range s.Nodes {
		ns := n.cfg.Netns(node.Name)
		cmds := NetemRules(s, i, n.cfg.Dev, ns)
		old, ok := n.applied[node.Name]
		if ok && slices.EqualFunc(old, cmds, slices.Equal) {
			continue
		}
		touched = append(touched, node.Name)
		prev[node.Name] = old
		err := func() error {
			if ok {
				if err := n.cfg.Exec(ctx, n.delRoot(ns)); err != nil {
					return err
				}
				delete(n.applied, node.Name)
			}
			for _, c := range cmds {
				if err := n.cfg.Exec(ctx, c); err != nil {
					return err
				}
			}
			n.applied[node.Name] = cmds
			return nil
		}()
		if err != nil {
			err = fmt.Errorf("linkem netem: node %s: %w", node.Name, err)
			return errors.Join(err, n.rollback(context.WithoutCancel(ctx), touched, prev))
		}
	}
	return nil
}

// ErrRolledBack marks an Apply that failed and put every link back as it was.
var ErrRolledBack = errors.New("rolled back: every link is as before")

// rollback reinstalls the previous rules (none for a node that had none) of
// the nodes an Apply touched, and says whether that worked.
func (n *Netem) rollback(ctx context.Context, nodes []string, prev map[string][][]string) error {
	var mixed []string
	var errs []error
	for _, node := range nodes {
		// The node may hold part of the new rules, or none: remove whatever
		// is there (a missing root qdisc is not an error here).
		_ = n.cfg.Exec(ctx, n.delRoot(n.cfg.Netns(node)))
		delete(n.applied, node)
		old := prev[node]
		var err error
		for _, c := range old {
			if err = n.cfg.Exec(ctx, c); err != nil {
				break
			}
		}
		if err != nil {
			mixed = append(mixed, node)
			errs = append(errs, fmt.Errorf("node %s: %w", node, err))
			_ = n.cfg.Exec(ctx, n.delRoot(n.cfg.Netns(node)))
			continue
		}
		if old != nil {
			n.applied[node] = old
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("linkem netem: rollback failed, links are mixed (unshaped: %s): %w", strings.Join(mixed, ", "), errors.Join(errs...))
	}
	return ErrRolledBack
}

func (n *Netem) delRoot(ns string) []string {
	return []string{"ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", n.cfg.Dev, "root"}
}

// Close removes the rules of every node it installed; a namespace that is
// already gone is not an error worth more than a joined report.
func (n *Netem) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for node := range n.applied {
		if err := n.cfg.Exec(context.Background(), n.delRoot(n.cfg.Netns(node))); err != nil {
			errs = append(errs, fmt.Errorf("linkem netem: remove rules of %s: %w", node, err))
		}
		delete(n.applied, node)
	}
	return errors.Join(errs...)
}
