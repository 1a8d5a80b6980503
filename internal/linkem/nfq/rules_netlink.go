package nfq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

// The netlink path installs the rules from the agent itself (no nft or
// iptables binary: a swarm task's image is FROM scratch), with
// github.com/google/nftables: one table per address family (ip / ip6,
// named Rules.Table) holding an output base chain, one rule per prefix:
// the destination matched by payload and mask, then the queue. The queue
// is nft's own `queue` expression where the kernel has nft_queue; this
// lab's kernel does not, so, as iptables-nft does, the rule's verdict is
// the xtables NFQUEUE target (revision 3) run through nft_compat.
const (
	// ViaNftQueue: nft's queue expression (nft_queue).
	ViaNftQueue = "nft_queue"
	// ViaXtNFQUEUE: the xtables NFQUEUE target through nft_compat.
	ViaXtNFQUEUE = "xt NFQUEUE target"
)

// nfqBypass is xt_NFQUEUE's NFQ_FLAG_BYPASS.
const nfqBypass = 0x01

// xtNFQInfoV3 is struct xt_NFQ_info_v3 {u16 queuenum, queues_total,
// flags} in the host's byte order, padded to XT_ALIGN (8 bytes), as
// iptables passes it.
func xtNFQInfoV3(queue uint16, bypass bool) []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint16(b[0:], queue)
	binary.NativeEndian.PutUint16(b[2:], 1)
	if bypass {
		binary.NativeEndian.PutUint16(b[4:], nfqBypass)
	}
	return b
}

// netlinkConn opens an nftables connection in r.Netns (a name under
// /run/netns) or this process's namespace; done closes what it opened.
func (r Rules) netlinkConn() (c *nftables.Conn, done func(), err error) {
	if r.Netns == "" {
		c, err = nftables.New()
		return c, func() {}, err
	}
	f, err := os.Open("/run/netns/" + r.Netns)
	if err != nil {
		return nil, nil, fmt.Errorf("netns %s: %w", r.Netns, err)
	}
	c, err = nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return c, func() { f.Close() }, nil
}

// netlinkTables are the tables r needs, one per address family present.
func (r Rules) netlinkTables() []*nftables.Table {
	var out []*nftables.Table
	v4, v6 := r.families()
	if len(v4) > 0 {
		out = append(out, &nftables.Table{Name: r.name(), Family: nftables.TableFamilyIPv4})
	}
	if len(v6) > 0 {
		out = append(out, &nftables.Table{Name: r.name(), Family: nftables.TableFamilyIPv6})
	}
	return out
}

// installNetlink installs r in one batch (all or nothing), nft_queue first,
// then the xt target; it returns which one the kernel took.
func (r Rules) installNetlink() (string, error) {
	c, done, err := r.netlinkConn()
	if err != nil {
		return "", fmt.Errorf("netlink: %w", err)
	}
	defer done()
	_ = r.removeNetlinkWith(c) // a dead agent's
	var errs []error
	for _, via := range []string{ViaNftQueue, ViaXtNFQUEUE} {
		for _, t := range r.netlinkTables() {
			c.AddTable(t)
			name, _, _ := r.hook()
			hook := nftables.ChainHookOutput
			if r.Ingress {
				hook = nftables.ChainHookInput
			}
			ch := c.AddChain(&nftables.Chain{Name: name, Table: t, Type: nftables.ChainTypeFilter,
				Hooknum: hook, Priority: nftables.ChainPriorityFilter, Policy: ref(nftables.ChainPolicyAccept)})
			for _, p := range r.Prefixes {
				p = p.Masked()
				if p.Addr().Is4() != (t.Family == nftables.TableFamilyIPv4) {
					continue
				}
				c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: append(addrMatch(p, r.Ingress), r.queueExpr(via))})
			}
		}
		err := c.Flush()
		if err == nil {
			return via, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", via, err))
	}
	return "", fmt.Errorf("netlink: %w", errors.Join(errs...))
}

func ref[T any](v T) *T { return &v }

// queueExpr sends the packet to r.Queue, with bypass.
func (r Rules) queueExpr(via string) expr.Any {
	if via == ViaNftQueue {
		return &expr.Queue{Num: r.Queue, Total: 1, Flag: expr.QueueFlagBypass}
	}
	info := xt.Unknown(xtNFQInfoV3(r.Queue, true))
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &info}
}

// addrMatch matches the packet's destination address (its source with
// src) against p (the network header's field, masked when p is not a
// single address).
func addrMatch(p netip.Prefix, src bool) []expr.Any {
	off, n := uint32(16), uint32(4) // IPv4 daddr
	if p.Addr().Is6() {
		off, n = 24, 16
	}
	if src { // saddr sits just before daddr, of the same size
		off -= n
	}
	out := []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n}}
	if p.Bits() < p.Addr().BitLen() {
		mask := make([]byte, n)
		for i := 0; i < p.Bits(); i++ {
			mask[i/8] |= 0x80 >> (i % 8)
		}
		out = append(out, &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: n, Mask: mask, Xor: make([]byte, n)})
	}
	return append(out, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: p.Addr().AsSlice()})
}

// removeNetlink deletes r's tables.
func (r Rules) removeNetlink() error {
	c, done, err := r.netlinkConn()
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer done()
	return r.removeNetlinkWith(c)
}

func (r Rules) removeNetlinkWith(c *nftables.Conn) error {
	var errs []error
	for _, t := range r.netlinkTables() {
		c.DelTable(t)
		if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("netlink: delete table %s: %w", t.Name, err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("netlink: no table %s", t.Name))
		}
	}
	return errors.Join(errs...)
}
