package nfq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
)

// Table is an agent's link table: what its --link and --rate flags say,
// and what its control port (PUT /links) replaces mid-run.
type Table struct {
	Links []Link
	// Rate paces all the node's emulated traffic (bits/s, 0: unlimited).
	Rate uint64
}

// ParseTable parses a table in the flags' syntax (ParseLink's per link,
// the manifest's bandwidth for the rate): the one parser of both the
// command line and the control port.
func ParseTable(w linkem.AgentTable) (Table, error) {
	var t Table
	for _, s := range w.Links {
		l, err := ParseLink(s)
		if err != nil {
			return Table{}, err
		}
		t.Links = append(t.Links, l)
	}
	if w.Rate != "" {
		r, err := linkem.ParseRate(w.Rate)
		if err != nil {
			return Table{}, fmt.Errorf("rate %q: %w", w.Rate, err)
		}
		t.Rate = r
	}
	return t, nil
}

// Wire renders t in the flags' syntax (ParseTable reads it back).
func (t Table) Wire() linkem.AgentTable {
	w := linkem.AgentTable{Links: []string{}}
	for _, l := range t.Links {
		w.Links = append(w.Links, l.String())
	}
	if t.Rate > 0 {
		w.Rate = linkem.FormatRate(t.Rate)
	}
	return w
}

// table is the link table in force: the receiver loads it once per
// packet, SetTable swaps it whole. Packets already scheduled keep their
// time (and count on their link's counters, which outlive tables).
type table struct {
	links []*link // longest prefix first; the last is "other"
	hosts []*link // Host links
	// byAddr maps the Host links' resolved addresses to them.
	byAddr     atomic.Pointer[map[netip.Addr]*link]
	rate       uint64
	queueBytes int
	conf       []Link // as configured, defaults filled in (Table reports it)
}

// counters are one destination's, kept by name across tables so that a
// port's counters never go back (the harness takes a drop for a restart).
type counters struct {
	sent, sentBytes,
	fwd, fwdBytes,
	lossDrops, queueDrops atomic.Uint64
}

// otherPort is the port of packets no link covers.
const otherPort = "other"

// newTable checks links and builds a table of them (no counters yet:
// Agent.bind).
func newTable(links []Link, rate uint64, queueBytes int) (*table, error) {
	t := &table{rate: rate, queueBytes: queueBytes}
	if rate > 0 && queueBytes == 0 {
		t.queueBytes = linkem.QueueBytesFor(rate)
	}
	names := map[string]bool{}
	for _, l := range links {
		if !l.Prefix.IsValid() && l.Host == "" {
			return nil, fmt.Errorf("nfq: link %q has no destination", l.Name)
		}
		if l.Loss < 0 || l.Loss > 1 || l.Delay < 0 || l.Jitter < 0 {
			return nil, fmt.Errorf("nfq: link %s%s: delay, jitter and loss must not be negative, loss at most 1", l.Prefix, l.Host)
		}
		if l.Rate > 0 && l.QueueBytes == 0 {
			l.QueueBytes = linkem.QueueBytesFor(l.Rate)
		}
		if l.Host == "" {
			l.Prefix = l.Prefix.Masked()
		}
		if l.Name == "" {
			l.Name = l.Host
			if l.Host == "" {
				l.Name = l.Prefix.String()
			}
		}
		// Counters are kept by name: two links of one name would mix theirs.
		if names[l.Name] || l.Name == otherPort {
			return nil, fmt.Errorf("nfq: link name %q twice or reserved (%q counts the packets no link covers)", l.Name, otherPort)
		}
		names[l.Name] = true
		t.conf = append(t.conf, l)
		if l.Host != "" {
			t.hosts = append(t.hosts, &link{Link: l})
		} else {
			t.links = append(t.links, &link{Link: l})
		}
	}
	sort.SliceStable(t.links, func(i, j int) bool { return t.links[i].Prefix.Bits() > t.links[j].Prefix.Bits() })
	t.links = append(t.links, &link{Link: Link{Name: otherPort}})
	t.byAddr.Store(&map[netip.Addr]*link{})
	return t, nil
}

// all is every link of t but "other".
func (t *table) all() []*link {
	return append(t.links[:len(t.links)-1:len(t.links)-1], t.hosts...)
}

// ports registers counters by name, in the order first configured.
type ports struct {
	mu    sync.Mutex
	by    map[string]*counters
	order []string
}

func (p *ports) get(name string) *counters {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.by[name]; ok {
		return c
	}
	if p.by == nil {
		p.by = map[string]*counters{}
	}
	c := &counters{}
	p.by[name] = c
	p.order = append(p.order, name)
	return c
}

// list returns the counters in registration order, "other" last.
func (p *ports) list() (names []string, cs []*counters) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.order {
		if n != otherPort {
			names, cs = append(names, n), append(cs, p.by[n])
		}
	}
	if c, ok := p.by[otherPort]; ok {
		names, cs = append(names, otherPort), append(cs, c)
	}
	return names, cs
}

// bind gives t's links their counters, by name, in configured order.
func (a *Agent) bind(t *table) {
	byName := map[string]*link{}
	for _, l := range t.all() {
		byName[l.Name] = l
	}
	for _, l := range t.conf {
		byName[l.Name].counters = a.ports.get(l.Name)
	}
	t.links[len(t.links)-1].counters = a.ports.get(otherPort)
}

// Table is the link table in force.
func (a *Agent) Table() Table {
	t := a.tab.Load()
	return Table{Links: slices.Clone(t.conf), Rate: t.rate}
}

// ErrNotQueued: a new table's link whose packets the rules installed at
// Start do not queue (rules are not changed mid-run).
var ErrNotQueued = errors.New("not queued by the agent's rules")

// SetTable replaces the link table while the agent runs: packets already
// held keep their schedule, new packets get the new table. It is whole or
// nothing: a table it refuses (a bad link, a destination the rules
// installed at Start do not queue) leaves the old one in force. A cut is
// a link of 100 % loss, as the model's partition. Host links new to the
// agent are looked up before the table takes effect (bounded by ctx), so
// a cut to a node just named applies at once.
func (a *Agent) SetTable(ctx context.Context, tb Table) (Table, error) {
	a.setMu.Lock()
	defer a.setMu.Unlock()
	if a.cfg.Ingress && tb.Rate > 0 {
		return Table{}, fmt.Errorf("%w (the agent started holding arriving packets)", errRateIngress)
	}
	t, err := newTable(tb.Links, tb.Rate, 0)
	if err != nil {
		return Table{}, err
	}
	if err := a.covered(t); err != nil {
		return Table{}, err
	}
	a.bind(t)
	old := a.tab.Load()
	// Bounded below the harness's push timeout: a name that does not
	// resolve yet (its node not running) is the resolve loop's to retry.
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	a.lookup(lctx, t, byHost(*old.byAddr.Load()), false)
	cancel()
	a.tab.Store(t)
	select { // look the new names up again soon if some did not resolve
	case a.missc <- struct{}{}:
	default:
	}
	return a.Table(), nil
}

// covered checks that the rules installed at Start queue every link of t.
func (a *Agent) covered(t *table) error {
	if len(t.hosts) > 0 && len(a.cfg.Capture) == 0 {
		return fmt.Errorf("nfq: link %s by host name: %w (started without a capture prefix)", t.hosts[0].Name, ErrNotQueued)
	}
	for _, l := range t.links[:len(t.links)-1] {
		if !slices.ContainsFunc(a.queued, func(q netip.Prefix) bool {
			return q.Bits() <= l.Prefix.Bits() && q.Contains(l.Prefix.Addr())
		}) {
			return fmt.Errorf("nfq: link %s (%s): %w (%v): restart the agent with it, or with a --capture covering it", l.Name, l.Prefix, ErrNotQueued, a.queued)
		}
	}
	return nil
}

// byHost is an address map by host name.
func byHost(m map[netip.Addr]*link) map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	for ad, l := range m {
		out[l.Host] = append(out[l.Host], ad)
	}
	return out
}

// lookup resolves t's Host links (every one, or only those prev has no
// address for) at most 16 at once, and publishes t's address map; a name
// that does not resolve keeps its addresses in prev. It reports whether
// every lookup made succeeded.
func (a *Agent) lookup(ctx context.Context, t *table, prev map[string][]netip.Addr, every bool) bool {
	r := a.cfg.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	found := make([][]netip.Addr, len(t.hosts))
	var failed atomic.Bool
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, l := range t.hosts {
		if !every && len(prev[l.Host]) > 0 {
			found[i] = prev[l.Host]
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			addrs, err := r.LookupNetIP(lctx, "ip", l.Host)
			cancel()
			if err != nil || len(addrs) == 0 {
				failed.Store(true)
				found[i] = prev[l.Host]
				return
			}
			for _, ad := range addrs {
				found[i] = append(found[i], ad.Unmap())
			}
		}()
	}
	wg.Wait()
	m := map[netip.Addr]*link{}
	for i, l := range t.hosts {
		for _, ad := range found[i] {
			m[ad] = l
		}
	}
	t.byAddr.Store(&m)
	return !failed.Load()
}
