package linkem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// KindAgent is the backend of runners whose nodes run apart (swarm): no
// process owns every link, so each node runs under an egress NFQUEUE agent
// in its own network namespace (internal/linkem/nfq, `benchnet node
// linkem-agent`), which emulates the node's links to the others. The
// backend computes each node's link table from the model (Args, taken by
// the runner when it starts the node) and records the agents' own
// lateness and counters into the run directory, scraped from each agent's
// metrics port, as the switch records its own.
const KindAgent = "agent"

// AgentsConfig configures the agent backend.
type AgentsConfig struct {
	// RecordDir is where lateness.jsonl and counters.prom are kept.
	RecordDir string
	// RecordEvery is the scrape interval (default 1 s).
	RecordEvery time.Duration
	// Capture is the network every agent queues (the overlay's subnet):
	// destinations are nodes by name, resolved by the agents.
	Capture netip.Prefix
	// Endpoint is where node's agent serves its metrics (host:port), ""
	// while it does not run.
	Endpoint func(node string) string
}

// Agents is the agent backend.
type Agents struct {
	cfg AgentsConfig

	mu      sync.Mutex
	snap    *Snapshot       // conditions last applied
	taken   map[string]bool // nodes whose table a runner took (they run with it)
	started bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	rec    *agentRecorder
	// scraping makes one scrape's reads and merge whole: two interleaved
	// would merge an agent's older reading after its newer one and take
	// the drop for a restart (counting its frames twice).
	scraping sync.Mutex
}

// NewAgents returns the agent backend.
func NewAgents(cfg AgentsConfig) *Agents {
	if cfg.RecordEvery <= 0 {
		cfg.RecordEvery = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agents{cfg: cfg, taken: map[string]bool{}, ctx: ctx, cancel: cancel}
}

func (a *Agents) Name() string { return KindAgent }

// Apply records the model's conditions for the nodes still to start, and
// pushes each running node's new table to its agent's control port (PUT
// /links). It is all or nothing: when an agent refuses or does not
// answer, the agents already changed get their previous table back
// (ErrRolledBack in the error) and the conditions stay those last applied.
// A node that took its table but runs no agent now (stopped) is skipped.
func (a *Agents) Apply(ctx context.Context, m *Model) error {
	s := m.Snapshot()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.snap != nil && len(a.taken) > 0 && !sameConditions(a.snap, s) {
		if err := a.push(ctx, a.snap, s); err != nil {
			return err
		}
	}
	a.snap = s
	if !a.started && a.cfg.RecordDir != "" {
		a.started = true
		rec, err := newAgentRecorder(a.cfg.RecordDir, Ingress(s))
		if err != nil {
			return err
		}
		a.rec = rec
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.recordLoop()
		}()
	}
	return nil
}

func sameConditions(x, y *Snapshot) bool {
	if len(x.Nodes) != len(y.Nodes) {
		return false
	}
	for i := range x.Nodes {
		if x.Nodes[i].Rate != y.Nodes[i].Rate || !slices.Equal(x.Links[i], y.Links[i]) {
			return false
		}
	}
	return true
}

// Args are the flags of node's `benchnet node linkem-agent` (before
// --metrics and the node's argv): one --link per other node its traffic
// is conditioned to (by name, resolved by the agent), --capture, the
// node's egress --rate, a --seed of its own.
func (a *Agents) Args(node string) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.snap
	if s == nil {
		return nil, fmt.Errorf("link agent of %s: no conditions applied yet", node)
	}
	i := s.Index(node)
	if i < 0 {
		return nil, fmt.Errorf("link agent of %s: not a node of the link model", node)
	}
	a.taken[node] = true
	return agentArgs(s, i, a.cfg.Capture), nil
}

// Ingress says whether the agents hold packets on arrival (nfq.Config.
// Ingress: on egress, TCP Small Queues caps a flow through a delayed
// link at a few packets per delay), which they do unless some node has
// an egress rate, a node's own budget over all its links that only its
// sender side sees. Then every agent keeps its egress: a rate-limited
// link backs TCP off as a slow NIC would, but its delay does too (docs/
// linkem.md says what that costs).
func Ingress(s *Snapshot) bool {
	for _, n := range s.Nodes {
		if n.Rate > 0 {
			return false
		}
	}
	return true
}

// agentArgs are node i's agent flags: on arrival (Ingress) one --link per
// peer j whose traffic to i is conditioned (the model's j→i), else one
// per destination j (i→j) and the node's --rate.
func agentArgs(s *Snapshot, i int, capture netip.Prefix) []string {
	args := []string{"--capture", capture.String(), "--seed", strconv.Itoa(i + 1)}
	if Ingress(s) {
		args = append(args, "--ingress")
	}
	t := agentTable(s, i)
	if t.Rate != "" {
		args = append(args, "--rate", t.Rate)
	}
	for _, l := range t.Links {
		args = append(args, "--link", l)
	}
	return args
}

// agentTable is node i's table: its egress rate, and a link (by name)
// to every other node with a condition (from it, on arrival: Ingress); a
// cut is a link of 100 % loss.
func agentTable(s *Snapshot, i int) AgentTable {
	t := AgentTable{Links: []string{}}
	ingress := Ingress(s)
	if r := s.Nodes[i].Rate; r > 0 {
		t.Rate = FormatRate(r)
	}
	for j := range s.Links[i] {
		l := s.Links[i][j]
		if ingress {
			l = s.Links[j][i]
		}
		if j == i || (l.Delay <= 0 && l.Jitter <= 0 && l.Loss <= 0) {
			continue // no condition: accepted at once as "other"
		}
		name := s.Nodes[j].Name
		var b strings.Builder
		b.WriteString(name + "=" + name)
		if l.Delay > 0 {
			b.WriteString(",delay=" + l.Delay.String())
		}
		if l.Jitter > 0 {
			b.WriteString(",jitter=" + l.Jitter.String())
		}
		if l.Loss > 0 {
			b.WriteString(",loss=" + strconv.FormatFloat(l.Loss*100, 'g', -1, 64) + "%")
		}
		t.Links = append(t.Links, b.String())
	}
	return t
}

// AgentTable is a link agent's table in its flags' syntax: each --link
// (nfq.ParseLink's syntax) and the --rate. It is the body of the agent's
// control port (PUT /links) and of its reply (the table in force).
type AgentTable struct {
	Links []string `json:"links"`
	Rate  string   `json:"rate,omitempty"`
}

// Close stops the recorder after a last scrape.
func (a *Agents) Close() error {
	a.cancel()
	a.wg.Wait()
	if a.rec != nil {
		return a.rec.close()
	}
	return nil
}

func (a *Agents) recordLoop() {
	t := time.NewTicker(a.cfg.RecordEvery)
	defer t.Stop()
	a.scrape()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
			a.scrape()
		}
	}
}

// scrape reads every running agent (at most 16 at once) and records the
// merged line.
func (a *Agents) scrape() {
	a.scraping.Lock()
	defer a.scraping.Unlock()
	a.mu.Lock()
	s := a.snap
	a.mu.Unlock()
	if s == nil || a.cfg.Endpoint == nil {
		return
	}
	type got struct {
		node   string
		sample *rundir.LinkemLatenessSample
		ctrs   *rundir.LinkemCounters
	}
	results := make([]got, len(s.Nodes))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, n := range s.Nodes {
		ep := a.cfg.Endpoint(n.Name)
		results[i].node = n.Name
		if ep == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i].sample, results[i].ctrs = scrapeAgent(a.ctx, ep)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.sample != nil {
			a.rec.observe(r.node, r.sample, r.ctrs)
		}
	}
	a.rec.write(time.Now())
}

var agentClient = &http.Client{Timeout: 2 * time.Second}

func scrapeAgent(ctx context.Context, ep string) (*rundir.LinkemLatenessSample, *rundir.LinkemCounters) {
	get := func(path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ep+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := agentClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", path, resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	}
	b, err := get("/lateness")
	if err != nil {
		return nil, nil
	}
	var s rundir.LinkemLatenessSample
	if json.Unmarshal(b, &s) != nil {
		return nil, nil
	}
	var c *rundir.LinkemCounters
	if b, err := get("/metrics"); err == nil {
		c, _ = rundir.DecodeLinkemCounters(strings.NewReader(string(b)), ep)
	}
	return &s, c
}

// agentRecorder merges the agents' records into one: the histograms
// summed (an agent that restarted with its node counts from zero again,
// so what it had before is kept as its base), the interval max the
// largest, the smallest delay the smallest; the counters one port per
// (node, destination), "node>destination" (an arriving link's
// "source>node": the direction its packets go).
type agentRecorder struct {
	dir     string
	ingress bool
	series  *rundir.JSONLWriter[rundir.LinkemLatenessSample]
	mu      sync.Mutex
	nodes   map[string]*agentRecord
	order   []string
	maxNs   int64 // the largest lateness any agent reported
	err     error
}

type agentRecord struct {
	base, last Lateness
	maxNs      int64 // interval max since the last line written
	minDelay   int64
	sched      string
	baseCtr    map[string]rundir.LinkemPortCounters
	lastCtr    map[string]rundir.LinkemPortCounters
	ports      []string
}

func newAgentRecorder(dir string, ingress bool) (*agentRecorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("link agents' record: %w", err)
	}
	f, err := rundir.LinkemLatenessSeries.Append(filepath.Join(dir, rundir.LinkemLatenessSeriesFile))
	if err != nil {
		return nil, fmt.Errorf("link agents' record: %w", err)
	}
	r := &agentRecorder{dir: dir, ingress: ingress, series: f, nodes: map[string]*agentRecord{}}
	r.write(time.Now()) // the base of a window that starts now
	return r, nil
}

func (r *agentRecorder) observe(node string, s *rundir.LinkemLatenessSample, c *rundir.LinkemCounters) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.nodes[node]
	if n == nil {
		n = &agentRecord{baseCtr: map[string]rundir.LinkemPortCounters{}, lastCtr: map[string]rundir.LinkemPortCounters{}}
		r.nodes[node] = n
		r.order = append(r.order, node)
	}
	cur := sampleHist(s)
	if cur.Frames < n.last.Frames { // the agent restarted with its node
		n.base = addHist(n.base, n.last)
	}
	n.last = cur
	n.maxNs = max(n.maxNs, s.MaxNs)
	n.minDelay, n.sched = s.MinDelayNs, s.Sched
	if c == nil {
		return
	}
	for _, p := range c.Ports {
		if old, ok := n.lastCtr[p.Port]; ok && p.SentPackets < old.SentPackets {
			n.baseCtr[p.Port] = addPort(n.baseCtr[p.Port], old)
		}
		if _, ok := n.lastCtr[p.Port]; !ok && !slices.Contains(n.ports, p.Port) {
			n.ports = append(n.ports, p.Port)
		}
		n.lastCtr[p.Port] = p
	}
}

func addHist(a, b Lateness) Lateness {
	out := Lateness{Frames: a.Frames + b.Frames, Sum: a.Sum + b.Sum, Max: max(a.Max, b.Max), Counts: make([]uint64, LatBuckets)}
	for i := range out.Counts {
		if i < len(a.Counts) {
			out.Counts[i] += a.Counts[i]
		}
		if i < len(b.Counts) {
			out.Counts[i] += b.Counts[i]
		}
	}
	return out
}

func addPort(a, b rundir.LinkemPortCounters) rundir.LinkemPortCounters {
	a.SentPackets += b.SentPackets
	a.SentBytes += b.SentBytes
	a.ForwardedPackets += b.ForwardedPackets
	a.ForwardedBytes += b.ForwardedBytes
	a.DroppedLoss += b.DroppedLoss
	a.DroppedQueue += b.DroppedQueue
	a.ReceivedPackets += b.ReceivedPackets
	a.ReceivedBytes += b.ReceivedBytes
	a.ReadErrors += b.ReadErrors
	a.WriteErrors += b.WriteErrors
	return a
}

// write appends the merged line and rewrites counters.prom.
func (r *agentRecorder) write(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var h Lateness
	var maxNs, minDelay int64
	var scheds []string
	c := &rundir.LinkemCounters{}
	for _, name := range r.order {
		n := r.nodes[name]
		h = addHist(h, addHist(n.base, n.last))
		maxNs = max(maxNs, n.maxNs)
		n.maxNs = 0
		if n.minDelay > 0 && (minDelay == 0 || n.minDelay < minDelay) {
			minDelay = n.minDelay
		}
		if n.sched != "" && !slices.Contains(scheds, n.sched) {
			scheds = append(scheds, n.sched)
		}
		for _, p := range n.ports {
			pc := addPort(n.baseCtr[p], n.lastCtr[p])
			pc.Port = name + ">" + p
			if r.ingress {
				pc.Port = p + ">" + name
			}
			c.Ports = append(c.Ports, pc)
		}
	}
	s := SampleOf(t, h, maxNs, minDelay, strings.Join(scheds, ", "))
	r.maxNs = max(r.maxNs, maxNs)
	h.Max = time.Duration(r.maxNs)
	c.Lateness = latenessHist(h)
	err := errors.Join(r.series.Write(&s), rundir.WriteLinkemCounters(filepath.Join(r.dir, rundir.LinkemCountersFile), c))
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("link agents' record %s: %w", r.dir, err)
	}
}

func (r *agentRecorder) close() error {
	r.write(time.Now())
	return errors.Join(r.err, r.series.Close())
}
