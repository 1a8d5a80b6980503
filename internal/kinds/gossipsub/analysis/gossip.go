// Package analysis analyses a gossip run from its run directory alone:
// message delivery ratio with every missing delivery attributed,
// dissemination times, hop counts in the first-delivery tree, duplicates,
// per-host CPU and memory, and the publish generator's own validity.
//
// It reads plan.json, published.csv, traces/*.csv, events.jsonl and
// metrics/proc.csv through internal/rundir, and writes deliveries.csv and the
// "gossip" section of results.json. Traces are streamed into flat arrays
// indexed by (message, node), so 10 M delivery records fit in a few hundred
// MB (see bench/gossip).
package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/load"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Reasons a (message, node) pair went undelivered, most specific first: the
// first that applies is the one recorded.
const (
	ReasonHostExited   = "host_exited"   // the node was down (events.jsonl: node_exited, node_kill or node_stop, until a restart) within ExitWindow of the publication
	ReasonHostPaused   = "host_paused"   // a [[perturb]] step froze the node (node_pause until node_resume) within ExitWindow of the publication
	ReasonHostCutOff   = "host_cut_off"  // a [[perturb]] step cut the links between the node and the publisher (node_disconnect or node_partition until node_heal) within ExitWindow of the publication
	ReasonNoTrace      = "no_trace"      // the node left no trace file
	ReasonQueueFull    = "queue_full"    // the router delivered it, the subscriber queue was full (undeliverable)
	ReasonRejected     = "rejected"      // the node's validation rejected it
	ReasonDroppedRPC   = "dropped_rpc"   // a peer dropped an RPC carrying it toward the node (outbound queue full)
	ReasonNeverReached = "never_reached" // no trace shows it reaching the node
)

// Input is what the analysis reads, already loaded: tests build it by hand,
// Load reads it from a run directory.
type Input struct {
	Nodes     []string           // plan order
	Published []rundir.Published // published.csv
	// Traces yields every trace event; it is called once. A trace file per
	// node is expected: Traced lists the nodes that had one.
	Traces func(yield func(*rundir.GossipEvent) error) error
	Traced []string
	Events []rundir.Event
	Proc   []rundir.Proc
	Host   []rundir.Host
}

// Load reads a run directory's inputs; traces are streamed later, file by file.
func Load(d *rundir.Dir) (*Input, error) {
	t, err := plan.Read(d.Path)
	if err != nil {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	in := &Input{}
	for _, n := range t.Nodes {
		in.Nodes = append(in.Nodes, n.Name)
	}
	pub, _, err := rundir.PublishedCSV.ReadFile(rundir.PublishedCSV.Path(d))
	if err != nil {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	in.Published = pub
	files, err := filepath.Glob(d.Join(rundir.GossipTraceDir, "*.csv"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		in.Traced = append(in.Traced, strings.TrimSuffix(filepath.Base(f), ".csv"))
	}
	in.Traces = func(yield func(*rundir.GossipEvent) error) error {
		for _, f := range files {
			if err := streamTrace(f, yield); err != nil {
				return err
			}
		}
		return nil
	}
	if in.Events, err = d.ReadEvents(); err != nil {
		// A cut last line loses one event; the rest is good.
		if len(in.Events) == 0 {
			return nil, fmt.Errorf("gossip analysis: %w", err)
		}
	}
	in.Proc, _, err = rundir.ProcCSV.ReadFile(rundir.ProcCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	in.Host, _, err = rundir.HostCSV.ReadFile(rundir.HostCSV.Path(d))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	return in, nil
}

// streamTrace decodes one trace file; a host killed mid-write leaves a cut
// last line, which the decoder skips.
func streamTrace(path string, yield func(*rundir.GossipEvent) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	node := strings.TrimSuffix(filepath.Base(path), ".csv")
	dec := rundir.GossipTraceCSV.NewDecoder(bufio.NewReaderSize(f, 1<<16), rundir.GossipTraceDir+"/"+filepath.Base(path))
	var e rundir.GossipEvent
	for {
		e = rundir.GossipEvent{}
		err := dec.Decode(&e)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if e.Node == "" {
			e.Node = node
		}
		if err := yield(&e); err != nil {
			return err
		}
	}
}

// Per (message, node) cell flags.
const (
	flagDelivered uint8 = 1 << iota
	flagUndeliverable
	flagRejected
	flagDropped
)

// Analysis holds the per-cell state of one run.
type analysis struct {
	in       *Input
	n        int
	node     map[string]int32
	msg      map[string]int32
	pubNode  []int32 // per message
	pubNs    []int64 // per message: the publisher's traced publish time, else the harness's
	counted  []bool  // per message: part of the MDR (published for sure)
	deliver  []int64 // per cell
	from     []int32 // per cell: forwarder node index, -1 unknown
	dups     []int32 // per cell
	flags    []uint8 // per cell
	res      rundir.GossipResults
	untraced map[int32]bool
	// out holds each host's outages from events.jsonl (outages).
	out map[int32][]outage
}

// Compute analyses in; rows are deliveries.csv's, one per (message, other
// node) in published.csv order, nodes in plan order.
func Compute(in *Input) (*rundir.GossipResults, []rundir.Delivery, error) {
	var rows []rundir.Delivery
	r, err := Stream(in, func(d *rundir.Delivery) error { rows = append(rows, *d); return nil })
	return r, rows, err
}

// Stream is Compute handing each deliveries.csv row to emit instead of
// keeping them (10 M rows would not fit).
func Stream(in *Input, emit func(*rundir.Delivery) error) (*rundir.GossipResults, error) {
	a, err := newAnalysis(in)
	if err != nil {
		return nil, err
	}
	if err := in.Traces(a.event); err != nil {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	if err := a.finish(emit); err != nil {
		return nil, err
	}
	return &a.res, nil
}

func newAnalysis(in *Input) (*analysis, error) {
	a := &analysis{in: in, n: len(in.Nodes), node: map[string]int32{}, msg: map[string]int32{},
		untraced: map[int32]bool{}, out: map[int32][]outage{}}
	if a.n == 0 {
		return nil, errors.New("gossip analysis: the plan has no nodes")
	}
	for i, n := range in.Nodes {
		a.node[n] = int32(i)
	}
	for i := range in.Published {
		p := &in.Published[i]
		if _, dup := a.msg[p.MsgID]; dup {
			return nil, fmt.Errorf("gossip analysis: published.csv lists message %s twice", p.MsgID)
		}
		pn, ok := a.node[p.Publisher]
		if !ok {
			return nil, fmt.Errorf("gossip analysis: published.csv: message %s publisher %q is not a plan node", p.MsgID, p.Publisher)
		}
		a.msg[p.MsgID] = int32(i)
		a.pubNode = append(a.pubNode, pn)
		t := p.Ack
		if t == 0 {
			t = p.SentAt
		}
		a.pubNs = append(a.pubNs, -t) // negative: not from the trace (see event)
		a.counted = append(a.counted, p.Result == rundir.ResultOK)
	}
	cells := len(in.Published) * a.n
	a.deliver = make([]int64, cells)
	a.from = make([]int32, cells)
	a.dups = make([]int32, cells)
	a.flags = make([]uint8, cells)
	traced := map[string]bool{}
	for _, t := range in.Traced {
		traced[t] = true
	}
	for i, n := range in.Nodes {
		if !traced[n] {
			a.untraced[int32(i)] = true
		}
	}
	for name, d := range outages(in.Events) {
		if i, ok := a.node[name]; ok {
			a.out[i] = d
		}
	}
	return a, nil
}

func (a *analysis) event(e *rundir.GossipEvent) error {
	switch e.Kind {
	case rundir.GossipDropRPC:
		a.res.DroppedRPC++
	case rundir.GossipUndeliverable:
		a.res.Undeliverable++
	case rundir.GossipReject:
		a.res.Rejected++
	}
	if e.MsgID == "" {
		return nil
	}
	m, ok := a.msg[e.MsgID]
	if !ok {
		a.res.UnknownMessages++
		return nil
	}
	v, ok := a.node[e.Node]
	if !ok {
		return fmt.Errorf("trace event of unknown node %q", e.Node)
	}
	c := int(m)*a.n + int(v)
	switch e.Kind {
	case rundir.GossipPublish:
		// The host's own time is the dissemination's start; a send_error
		// row whose publish got through still counts.
		if v == a.pubNode[m] {
			if a.pubNs[m] <= 0 || e.TimeNs < a.pubNs[m] {
				a.pubNs[m] = e.TimeNs
			}
			a.counted[m] = true
		}
	case rundir.GossipDeliver:
		if a.flags[c]&flagDelivered == 0 || e.TimeNs < a.deliver[c] {
			a.deliver[c] = e.TimeNs
			a.from[c] = a.peer(e.Peer)
		}
		a.flags[c] |= flagDelivered
	case rundir.GossipDuplicate:
		a.dups[c]++
	case rundir.GossipUndeliverable:
		a.flags[c] |= flagUndeliverable
	case rundir.GossipReject:
		a.flags[c] |= flagRejected
	case rundir.GossipDropRPC:
		// Recorded by the sender: the loss is the target's.
		if t, ok := a.node[e.Peer]; ok {
			a.flags[int(m)*a.n+int(t)] |= flagDropped
		}
	}
	return nil
}

func (a *analysis) peer(name string) int32 {
	if i, ok := a.node[name]; ok {
		return i
	}
	return -1
}

// ExitWindow is how long after its publication a message can still be
// lost to a host's exit: a host that dies within it (or is down when the
// message is published) is blamed for the message it never delivered. The
// same window applies to a pause and to a cut.
const ExitWindow = 10 * time.Second

func (a *analysis) reason(c int, v, p int32, pub int64) string {
	f := a.flags[c]
	if r := a.outageReason(v, p, pub); r != "" {
		return r
	}
	switch {
	case a.untraced[v]:
		return ReasonNoTrace
	case f&flagUndeliverable != 0:
		return ReasonQueueFull
	case f&flagRejected != 0:
		return ReasonRejected
	case f&flagDropped != 0:
		return ReasonDroppedRPC
	}
	return ReasonNeverReached
}

// finish walks every message's first-delivery tree and fills the results.
func (a *analysis) finish(emit func(*rundir.Delivery) error) error {
	r := &a.res
	n := a.n
	r.Nodes = n
	r.Missing = map[string]int{}
	nodes := make([]rundir.GossipNode, n)
	for i, name := range a.in.Nodes {
		o := nodeOutages(a.out[int32(i)], runEnd(a.in))
		_, down := downSec(o)
		nodes[i] = rundir.GossipNode{Name: name, Exited: down, Outages: o}
	}
	var dissem, last, lastHop, maxHop, dups []float64
	depth := make([]int32, n)
	for m := range a.in.Published {
		p := &a.in.Published[m]
		pub := a.pubNode[m]
		pubNs := a.pubNs[m]
		if pubNs < 0 {
			pubNs = -pubNs
		}
		if !a.counted[m] {
			continue
		}
		r.Messages++
		nodes[pub].Published++
		base := m * n
		for i := range depth {
			depth[i] = -2 // not computed
		}
		depth[pub] = 0
		var lastNs int64 = math.MinInt64
		lastAt := -1
		deepest := int32(-1)
		for v := 0; v < n; v++ {
			if int32(v) == pub {
				continue
			}
			c := base + v
			row := rundir.Delivery{MsgID: p.MsgID, Publisher: p.Publisher, Node: a.in.Nodes[v], PublishNs: pubNs}
			nodes[v].Expected++
			r.Expected++
			delivered := a.flags[c]&flagDelivered != 0 && a.flags[c]&flagUndeliverable == 0
			if !delivered {
				row.State, row.Reason = rundir.DeliveryMissing, a.reason(c, int32(v), pub, pubNs)
				if a.flags[c]&flagDelivered != 0 {
					row.DeliverNs = a.deliver[c] // the router had it
				}
				r.Missing[row.Reason]++
				if nodes[v].Missing == nil {
					nodes[v].Missing = map[string]int{}
				}
				nodes[v].Missing[row.Reason]++
			} else {
				r.Delivered++
				nodes[v].Delivered++
				row.State, row.DeliverNs = rundir.DeliveryDelivered, a.deliver[c]
				d := a.depth(base, int32(v), depth)
				row.Hop = int(d)
				if d < 0 {
					r.HopsUnknown++
				} else {
					r.DeliveryHopHist = bump(r.DeliveryHopHist, int(d))
					deepest = max(deepest, d)
				}
				dissem = append(dissem, float64(row.DeliverNs-pubNs)/1e6)
				if row.DeliverNs > lastNs {
					lastNs, lastAt = row.DeliverNs, v
				}
				dups = append(dups, float64(a.dups[c]))
				nodes[v].Duplicates += float64(a.dups[c])
			}
			if f := a.from[c]; a.flags[c]&flagDelivered != 0 && f >= 0 {
				row.From = a.in.Nodes[f]
			}
			row.Duplicates = int(a.dups[c])
			if err := emit(&row); err != nil {
				return err
			}
		}
		if lastAt >= 0 {
			last = append(last, float64(lastNs-pubNs)/1e6)
			if d := depth[lastAt]; d >= 0 {
				lastHop = append(lastHop, float64(d))
				r.LastDeliveryHopHist = bump(r.LastDeliveryHopHist, int(d))
			}
		}
		if deepest >= 0 {
			maxHop = append(maxHop, float64(deepest))
			r.MaxHopHist = bump(r.MaxHopHist, int(deepest))
		}
	}
	if r.Expected > 0 {
		r.MDR = round6(float64(r.Delivered) / float64(r.Expected))
	}
	if len(r.Missing) == 0 {
		r.Missing = nil
	}
	r.Dissemination, r.LastDelivery = summarize(dissem), summarize(last)
	r.LastDeliveryHop, r.MaxHop, r.Duplicates = summarize(lastHop), summarize(maxHop), summarize(dups)
	procs := procStats(a.in.Proc)
	for i := range nodes {
		g := &nodes[i]
		if g.Expected > 0 {
			g.MDR = round6(float64(g.Delivered) / float64(g.Expected))
		}
		if g.Delivered > 0 {
			g.Duplicates = analyze.Round3(g.Duplicates / float64(g.Delivered))
		}
		if ps, ok := procs[g.Name]; ok {
			g.Proc = *ps
		}
	}
	if ps, ok := procs[rundir.HarnessNode]; ok {
		r.Harness = ps
	}
	r.HostNodes = nodes
	r.Publish = publishStats(a.in.Published)
	r.MachineBusyPct = machineBusy(a.in.Host, a.in.Published)
	return nil
}

// machineBusy is the machine's CPU busy share over the publish schedule
// (host.csv samples from the first intended publish to the last), in %.
func machineBusy(host []rundir.Host, pub []rundir.Published) float64 {
	if len(pub) == 0 {
		return 0
	}
	lo, hi := pub[0].Intended, pub[0].Intended
	for _, p := range pub {
		lo, hi = min(lo, p.Intended), max(hi, p.Intended)
	}
	var first, last *rundir.Host
	for i := range host {
		h := &host[i]
		if h.TimeNs < lo || h.TimeNs > hi {
			continue
		}
		if first == nil || h.TimeNs < first.TimeNs {
			first = h
		}
		if last == nil || h.TimeNs > last.TimeNs {
			last = h
		}
	}
	if first == nil || last == first || last.CPUTotalSeconds <= first.CPUTotalSeconds {
		return 0
	}
	return analyze.Round3(100 * (last.CPUBusySeconds - first.CPUBusySeconds) / (last.CPUTotalSeconds - first.CPUTotalSeconds))
}

// depth of node v in the message's first-delivery tree (publisher 0), or -1
// when its forwarder chain breaks (an unknown forwarder, or one that never
// delivered the message). Memoized in depth; -3 marks a node on the current
// walk, so corrupt traces with a cycle end as unknown, not a loop.
func (a *analysis) depth(base int, v int32, depth []int32) int32 {
	var path []int32
	d := int32(-1)
	for {
		if depth[v] != -2 {
			if depth[v] >= 0 {
				d = depth[v]
			}
			break
		}
		depth[v] = -3
		path = append(path, v)
		c := base + int(v)
		f := a.from[c]
		if a.flags[c]&flagDelivered == 0 || f < 0 {
			break
		}
		v = f
	}
	// path[k]'s depth is d + (len(path) - k) when d is known.
	for k := len(path) - 1; k >= 0; k-- {
		if d >= 0 {
			d++
			depth[path[k]] = d
		} else {
			depth[path[k]] = -1
		}
	}
	if len(path) == 0 {
		return d
	}
	return depth[path[0]]
}

func bump(h []int, i int) []int {
	for len(h) <= i {
		h = append(h, 0)
	}
	h[i]++
	return h
}

// publishStats certifies the publish generator with the tx load's own meter
// and limits (one "connection": the harness's schedule).
func publishStats(pub []rundir.Published) rundir.PublishStats {
	var m load.ConnMeter
	ps := rundir.PublishStats{Scheduled: len(pub)}
	for i := range pub {
		p := &pub[i]
		if p.Result == rundir.ResultSendError {
			ps.SendErrors++
		}
		m.Add(&rundir.Sent{Seq: p.Seq, Intended: p.Intended, SentAt: p.SentAt, Ack: p.Ack, Result: p.Result})
	}
	lc, _ := m.Summary("publish", 0, 0)
	ps.TargetRate, ps.Achieved = analyze.Round3(lc.TargetRate), analyze.Round3(lc.Achieved)
	ps.LagP50Ms, ps.LagP99Ms, ps.LagMaxMs = analyze.Round3(lc.LagP50Ms), analyze.Round3(lc.LagP99Ms), analyze.Round3(lc.LagMaxMs)
	return ps
}

// MaxMachineBusyPct is the machine CPU share above which a run measured the
// machine, not the protocol: every host, the harness and the emulator share
// its cores, so delays and losses past it are queueing for a CPU.
const MaxMachineBusyPct = 95.0

// Validity checks the publish generator against the tx load's limits
// (load.MaxLagP99, load.MinAchieved) and the machine's CPU against
// MaxMachineBusyPct, and returns why the run is not valid.
func Validity(r *rundir.GossipResults) []string {
	var why []string
	p := r.Publish
	switch {
	case p.Scheduled == 0:
		why = append(why, "publish: no message was scheduled")
	case p.SendErrors == p.Scheduled:
		why = append(why, fmt.Sprintf("publish: all %d publish requests failed", p.Scheduled))
	}
	if p.LagP99Ms > ms(load.MaxLagP99.Nanoseconds()) {
		why = append(why, fmt.Sprintf("publish: lag p99 %.1f ms > %v: the generator fell behind its schedule", p.LagP99Ms, load.MaxLagP99))
	}
	if r.MachineBusyPct > MaxMachineBusyPct {
		why = append(why, fmt.Sprintf("machine CPU %.1f%% busy over the schedule (> %.0f%%): hosts and harness competed for the cores", r.MachineBusyPct, MaxMachineBusyPct))
	}
	if p.TargetRate > 0 && p.Achieved < load.MinAchieved*p.TargetRate {
		why = append(why, fmt.Sprintf("publish: achieved %.1f msg/s < %.0f%% of target %.1f msg/s", p.Achieved, 100*load.MinAchieved, p.TargetRate))
	}
	return why
}

// procStats turns cumulative CPU seconds and RSS samples into per-process
// figures: CPU % of one core between consecutive samples of the same pid
// (max) and over the whole sampled span (avg).
func procStats(rows []rundir.Proc) map[string]*rundir.ProcStats {
	by := map[string][]rundir.Proc{}
	for _, p := range rows {
		by[p.Node] = append(by[p.Node], p)
	}
	out := map[string]*rundir.ProcStats{}
	for name, ps := range by {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].TimeNs < ps[j].TimeNs })
		s := &rundir.ProcStats{Samples: len(ps)}
		var rss, cpu, span float64
		for i, p := range ps {
			rss += float64(p.RSSBytes)
			s.RSSMaxMB = max(s.RSSMaxMB, float64(p.RSSBytes)/(1<<20))
			if i == 0 || ps[i-1].PID != p.PID || p.TimeNs <= ps[i-1].TimeNs {
				continue
			}
			dc, dt := p.CPUSeconds-ps[i-1].CPUSeconds, float64(p.TimeNs-ps[i-1].TimeNs)/1e9
			if dc < 0 {
				continue
			}
			cpu, span = cpu+dc, span+dt
			s.CPUMaxPct = max(s.CPUMaxPct, 100*dc/dt)
		}
		if span > 0 {
			s.CPUAvgPct = analyze.Round3(100 * cpu / span)
		}
		s.CPUMaxPct = analyze.Round3(s.CPUMaxPct)
		s.RSSMaxMB, s.RSSAvgMB = analyze.Round3(s.RSSMaxMB), analyze.Round3(rss/float64(len(ps))/(1<<20))
		out[name] = s
	}
	return out
}

// summarize is the tx analysis' Summarize: the same nearest-rank
// percentiles and rounding for delivery times as for tx latencies.
func summarize(v []float64) rundir.Stats { return analyze.Summarize(v) }

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
