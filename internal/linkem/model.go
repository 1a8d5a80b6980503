// Package linkem emulates a wide-area network between the nodes of a plan:
// per ordered pair of nodes a one-way delay (from a zone matrix), jitter and
// loss, and per node an egress rate with a drop-tail queue.
//
// A Model holds the conditions; a Backend installs them. Two backends exist
// because some kernels ship without sch_netem: "netem" (kernel tc rules run
// in each node's namespace) and "userspace" (a learning L2 switch in the
// harness that owns every node's TAP link). Experiments change a Model
// (SetLink, Partition, Heal) and call Backend.Apply again to push the change.
package linkem

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/plan"
)

// Link is the condition of one direction of a link between two nodes.
type Link struct {
	Delay  time.Duration `json:"delay"`  // one-way
	Jitter time.Duration `json:"jitter"` // standard deviation of a normal distribution around Delay
	Loss   float64       `json:"loss"`   // drop probability in [0, 1]
}

func (l Link) String() string {
	return fmt.Sprintf("delay=%v jitter=%v loss=%g%%", l.Delay, l.Jitter, l.Loss*100)
}

// Endpoint is one node as the emulator sees it.
type Endpoint struct {
	Name string     `json:"name"`
	Zone string     `json:"zone"`
	Addr netip.Addr `json:"addr"`
	// Rate is the node's egress rate in bits/s (0 = unlimited).
	Rate uint64 `json:"rate"`
	// QueueBytes is the drop-tail limit of the egress queue in bytes
	// (Ethernet frames, headers included).
	QueueBytes int `json:"queue_bytes"`
}

// Queue sizing: QueueLatency of traffic at the egress rate, at least
// MinQueueBytes (so a slow link still holds ~20 full frames).
const (
	QueueLatency  = 100 * time.Millisecond
	MinQueueBytes = 32 << 10
)

// QueueBytesFor is the default egress queue limit for a rate.
func QueueBytesFor(rate uint64) int {
	q := int(float64(rate) / 8 * QueueLatency.Seconds())
	return max(q, MinQueueBytes)
}

// Snapshot is an immutable view of a Model at one version; backends read
// only snapshots, so a model can change while frames are in flight.
type Snapshot struct {
	Version uint64
	Nodes   []Endpoint
	// Links[i][j] is the condition from Nodes[i] to Nodes[j].
	Links [][]Link
	index map[string]int
}

// Index returns the position of node name, or -1.
func (s *Snapshot) Index(name string) int {
	if i, ok := s.index[name]; ok {
		return i
	}
	return -1
}

// Model is the emulated network of a testnet. It is safe for concurrent use.
type Model struct {
	// Matrix is the zone matrix delays come from; nil when the manifest
	// sets no [network].zones (every delay is then zero).
	Matrix *Matrix
	// Seed drives jitter and loss draws of the userspace backend.
	Seed int64

	mu        sync.Mutex
	nodes     []Endpoint
	index     map[string]int
	base      [][]Link
	override  map[[2]int]Link
	rate      map[int]uint64
	partition map[[2]int]bool
	snap      atomic.Pointer[Snapshot]
}

// Build derives the model of a plan from its [network] table and node zones.
func Build(p *plan.Testnet) (*Model, error) {
	nw := p.Network
	jfrac, jabs, err := ParseJitter(nw.Jitter)
	if err != nil {
		return nil, err
	}
	uniform, err := ParseDelay(nw.Delay)
	if err != nil {
		return nil, err
	}
	loss, err := ParseLoss(nw.Loss)
	if err != nil {
		return nil, err
	}
	rate, err := ParseRate(nw.Bandwidth)
	if err != nil {
		return nil, err
	}
	var mx *Matrix
	if nw.Zones != "" {
		if mx, err = LoadMatrix(nw.Zones); err != nil {
			return nil, err
		}
	}
	eps := make([]Endpoint, len(p.Nodes))
	var errs []string
	for i, n := range p.Nodes {
		if mx != nil && !mx.Has(n.Zone) {
			errs = append(errs, fmt.Sprintf("node %s: zone %q is not in zone set %s (known: %s)",
				n.Name, n.Zone, mx.Name, strings.Join(mx.Zones, ", ")))
		}
		eps[i] = Endpoint{Name: n.Name, Zone: n.Zone, Addr: n.Addr, Rate: rate, QueueBytes: QueueBytesFor(rate)}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("linkem: %s", strings.Join(errs, "; "))
	}
	return New(eps, mx, func(a, b Endpoint) Link {
		// [network].delay is the same on every link, on top of the zones'.
		d := mx.OneWay(a.Zone, b.Zone) + uniform
		j := jabs
		if jfrac > 0 {
			j = time.Duration(float64(d) * jfrac)
		}
		return Link{Delay: d, Jitter: j, Loss: loss}
	}, p.Seed)
}

// New builds a model from endpoints and a function giving the base link of
// each ordered pair. Names must be unique.
func New(eps []Endpoint, mx *Matrix, link func(from, to Endpoint) Link, seed int64) (*Model, error) {
	m := &Model{Matrix: mx, Seed: seed, nodes: slices.Clone(eps), index: map[string]int{}}
	for i, e := range eps {
		if _, dup := m.index[e.Name]; dup {
			return nil, fmt.Errorf("linkem: node %q listed twice", e.Name)
		}
		m.index[e.Name] = i
	}
	m.base = make([][]Link, len(eps))
	for i, a := range eps {
		m.base[i] = make([]Link, len(eps))
		for j, b := range eps {
			if i != j {
				m.base[i][j] = link(a, b)
			}
		}
	}
	m.override = map[[2]int]Link{}
	m.rate = map[int]uint64{}
	m.partition = map[[2]int]bool{}
	m.publish()
	return m, nil
}

// Snapshot returns the current conditions.
func (m *Model) Snapshot() *Snapshot { return m.snap.Load() }

// Link returns the current condition from node a to node b.
func (m *Model) Link(a, b string) (Link, error) {
	s := m.Snapshot()
	i, j := s.Index(a), s.Index(b)
	if i < 0 || j < 0 {
		return Link{}, fmt.Errorf("linkem: link %s→%s: unknown node", a, b)
	}
	return s.Links[i][j], nil
}

// SetLink overrides the condition from a to b (one direction; call twice for
// both). A partition still wins over an override.
func (m *Model) SetLink(a, b string, l Link) error {
	if l.Loss < 0 || l.Loss > 1 || l.Delay < 0 || l.Jitter < 0 {
		return fmt.Errorf("linkem: set link %s→%s: invalid %s", a, b, l)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, j, err := m.pair(a, b)
	if err != nil {
		return fmt.Errorf("linkem: set link: %w", err)
	}
	m.override[[2]int{i, j}] = l
	m.publishLocked()
	return nil
}

// SetRate overrides a node's egress rate (bits/s, 0 = unlimited); the queue
// limit follows QueueBytesFor.
func (m *Model) SetRate(node string, bps uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.index[node]
	if !ok {
		return fmt.Errorf("linkem: set rate: unknown node %q", node)
	}
	m.rate[i] = bps
	m.publishLocked()
	return nil
}

// Partition cuts every link between group a and group b, both ways
// (100 % loss), until Heal.
func (m *Model) Partition(a, b []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Every pair is checked before any is cut: a bad name changes nothing.
	var cut [][2]int
	for _, x := range a {
		for _, y := range b {
			i, j, err := m.pair(x, y)
			if err != nil {
				return fmt.Errorf("linkem: partition: %w", err)
			}
			cut = append(cut, [2]int{i, j}, [2]int{j, i})
		}
	}
	for _, c := range cut {
		m.partition[c] = true
	}
	m.publishLocked()
	return nil
}

// Conditions is the changeable part of a Model (overrides, rates,
// partitions), saved so that a change a backend refused can be undone with
// Restore on the same model.
type Conditions struct {
	override  map[[2]int]Link
	rate      map[int]uint64
	partition map[[2]int]bool
}

// Save returns the model's current conditions.
func (m *Model) Save() Conditions {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Conditions{override: maps.Clone(m.override), rate: maps.Clone(m.rate), partition: maps.Clone(m.partition)}
}

// Restore puts back conditions Save returned (from this model) and
// publishes them.
func (m *Model) Restore(c Conditions) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.override, m.rate, m.partition = map[[2]int]Link{}, map[int]uint64{}, map[[2]int]bool{}
	maps.Copy(m.override, c.override)
	maps.Copy(m.rate, c.rate)
	maps.Copy(m.partition, c.partition)
	m.publishLocked()
}

// Heal removes every partition and override, restoring the conditions Build
// derived from the plan.
func (m *Model) Heal() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.partition)
	clear(m.override)
	clear(m.rate)
	m.publishLocked()
}

func (m *Model) pair(a, b string) (int, int, error) {
	i, ok1 := m.index[a]
	j, ok2 := m.index[b]
	switch {
	case !ok1:
		return 0, 0, fmt.Errorf("unknown node %q", a)
	case !ok2:
		return 0, 0, fmt.Errorf("unknown node %q", b)
	case i == j:
		return 0, 0, fmt.Errorf("%q to itself is not a link", a)
	}
	return i, j, nil
}

func (m *Model) publish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.publishLocked()
}

func (m *Model) publishLocked() {
	s := &Snapshot{Nodes: slices.Clone(m.nodes), Links: make([][]Link, len(m.nodes)), index: m.index}
	if old := m.snap.Load(); old != nil {
		s.Version = old.Version + 1
	}
	for i := range m.nodes {
		if r, ok := m.rate[i]; ok {
			s.Nodes[i].Rate, s.Nodes[i].QueueBytes = r, QueueBytesFor(r)
		}
		s.Links[i] = slices.Clone(m.base[i])
		for j := range m.nodes {
			if o, ok := m.override[[2]int{i, j}]; ok {
				s.Links[i][j] = o
			}
			if m.partition[[2]int{i, j}] {
				s.Links[i][j].Loss = 1
			}
		}
	}
	m.snap.Store(s)
}

// Zones returns the distinct zones of the model's nodes, sorted.
func (s *Snapshot) Zones() []string {
	var zs []string
	for _, n := range s.Nodes {
		if !slices.Contains(zs, n.Zone) {
			zs = append(zs, n.Zone)
		}
	}
	sort.Strings(zs)
	return zs
}
