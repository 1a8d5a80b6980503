// Package gossiptest writes synthetic gossip run directories: a flood over a
// graph with a fixed one-way delay per hop, traced the way the gossipsub
// host traces (publish, deliver with the forwarder, duplicate), with
// optional killed hosts, dropped RPCs and full subscriber queues. It is the
// fake below the analysis: tests know the true hops and times of such a
// flood, and bench/gossip sizes it to millions of records.
package gossiptest

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Net is the synthetic network.
type Net struct {
	Nodes []string
	Adj   [][]int       // neighbours of each node
	Delay time.Duration // one-way delay of every hop
	// Fanout > 0 forwards each message to at most Fanout neighbours (a
	// mesh), drawn from Seed; 0 floods to every neighbour.
	Fanout int
	Seed   uint64
	// Killed maps a node to the time it died: it traces and forwards
	// nothing from then on, and events.jsonl gets node_exited.
	Killed map[int]int64
	// DropTo drops every forward toward these nodes, traced by the sender
	// as drop_rpc (an outbound queue overflow).
	DropTo map[int]bool
	// ProcSamples > 0 writes metrics/proc.csv: that many samples per node,
	// one per second from the first publish, node i burning (i+1)% of a
	// core and holding (20+i) MiB, plus the harness at 50 %.
	ProcSamples int
	// Undeliverable marks these nodes' subscriber queues full: the router
	// delivers and forwards, the host traces undeliverable.
	Undeliverable map[int]bool
}

// Msg is one message to publish.
type Msg struct {
	ID        string
	Publisher int
	At        int64 // publish time, ns
	// Lag is how late the harness sent the publish request (SentAt - At).
	Lag time.Duration
	// Late delays the whole publication (a publisher that blocked): the
	// harness sends and the host publishes Late after At, which stays the
	// intended time. Lag adds to it for the send.
	Late time.Duration
}

// Schedule returns count messages at rate msg/s from t0, each from a
// publisher drawn from seed, IDs "m<seq>".
func Schedule(n, count int, rate float64, t0 int64, seed uint64) []Msg {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]Msg, count)
	for i := range out {
		out[i] = Msg{ID: fmt.Sprintf("m%06d", i), Publisher: rng.IntN(n), At: t0 + int64(float64(i)*1e9/rate)}
	}
	return out
}

// Write creates the run directory dir: plan.json, published.csv,
// traces/<node>.csv and events.jsonl. It returns the number of trace rows.
func Write(dir string, net Net, msgs []Msg) (int, error) {
	if err := os.MkdirAll(filepath.Join(dir, rundir.GossipTraceDir), 0o755); err != nil {
		return 0, err
	}
	d := &rundir.Dir{Path: dir}
	t := &plan.Testnet{Name: "synthetic", Topology: "synthetic"}
	for i, n := range net.Nodes {
		t.Nodes = append(t.Nodes, &plan.Node{Name: n, Index: i, Group: "host", Role: "host"})
	}
	pj, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := d.WriteFile(rundir.Plan, pj); err != nil {
		return 0, err
	}
	var pub []rundir.Published
	for i, m := range msgs {
		sent := m.At + int64(m.Late) + int64(m.Lag)
		p := rundir.Published{Seq: uint64(i), MsgID: m.ID, Publisher: net.Nodes[m.Publisher],
			Intended: m.At, SentAt: sent, Ack: sent + 100_000, Result: rundir.ResultOK}
		if k, dead := net.Killed[m.Publisher]; dead && sent >= k {
			// A dead host does not answer the publish request.
			p.Ack, p.Result, p.Log = 0, rundir.ResultSendError, "connection refused"
		}
		pub = append(pub, p)
	}
	if err := rundir.PublishedCSV.WriteFile(rundir.PublishedCSV.Path(d), pub); err != nil {
		return 0, err
	}
	ws := make([]*rundir.Writer[rundir.GossipEvent], len(net.Nodes))
	for i, n := range net.Nodes {
		if ws[i], err = rundir.GossipTraceCSV.Create(rundir.TraceFile(d, n)); err != nil {
			return 0, err
		}
	}
	rows := 0
	rec := func(v int, e rundir.GossipEvent) error {
		if k, dead := net.Killed[v]; dead && e.TimeNs >= k {
			return nil
		}
		rows++
		return ws[v].Write(&e)
	}
	rng := rand.New(rand.NewPCG(net.Seed, 2))
	for _, m := range msgs {
		if err := flood(net, m, rng, rec); err != nil {
			return rows, err
		}
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			return rows, err
		}
	}
	if net.ProcSamples > 0 && len(msgs) > 0 {
		if err := writeProc(d, net, msgs[0].At); err != nil {
			return rows, err
		}
	}
	var ev []byte
	for v, k := range net.Killed {
		line, _ := json.Marshal(rundir.Event{Time: time.Unix(0, k).UTC(), Kind: rundir.EventNodeExited, Node: net.Nodes[v], Detail: "killed"})
		ev = append(append(ev, line...), '\n')
	}
	return rows, d.WriteFile(rundir.Events, ev)
}

type arrival struct {
	t        int64
	seq      int
	to, from int
}

type queue []arrival

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(arrival)) }
func (q *queue) Pop() (x any) { x, *q = (*q)[len(*q)-1], (*q)[:len(*q)-1]; return x }

// flood runs one message through the net in time order.
func flood(net Net, m Msg, rng *rand.Rand, rec func(int, rundir.GossipEvent) error) error {
	alive := func(v int, t int64) bool { k, dead := net.Killed[v]; return !dead || t < k }
	at := m.At + int64(m.Late)
	if !alive(m.Publisher, at) {
		return nil
	}
	seen := make([]bool, len(net.Nodes))
	q := &queue{}
	seq := 0
	forward := func(v, from int, t int64) error {
		targets := net.Adj[v]
		if net.Fanout > 0 && len(targets) > net.Fanout {
			targets = append([]int(nil), targets...)
			rng.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
			targets = targets[:net.Fanout]
		}
		for _, w := range targets {
			if w == from {
				continue
			}
			if net.DropTo[w] {
				if err := rec(v, rundir.GossipEvent{TimeNs: t, Node: net.Nodes[v], Kind: rundir.GossipDropRPC, MsgID: m.ID, Peer: net.Nodes[w], Reason: "queue_full"}); err != nil {
					return err
				}
				continue
			}
			seq++
			heap.Push(q, arrival{t: t + int64(net.Delay), seq: seq, to: w, from: v})
		}
		return nil
	}
	seen[m.Publisher] = true
	if err := rec(m.Publisher, rundir.GossipEvent{TimeNs: at, Node: net.Nodes[m.Publisher], Kind: rundir.GossipPublish, MsgID: m.ID, Size: 1000}); err != nil {
		return err
	}
	if err := forward(m.Publisher, -1, at); err != nil {
		return err
	}
	for q.Len() > 0 {
		a := heap.Pop(q).(arrival)
		if !alive(a.to, a.t) {
			continue
		}
		e := rundir.GossipEvent{TimeNs: a.t, Node: net.Nodes[a.to], MsgID: m.ID, Peer: net.Nodes[a.from], Size: 1000}
		if seen[a.to] {
			e.Kind = rundir.GossipDuplicate
			if err := rec(a.to, e); err != nil {
				return err
			}
			continue
		}
		seen[a.to] = true
		e.Kind = rundir.GossipDeliver
		if err := rec(a.to, e); err != nil {
			return err
		}
		if net.Undeliverable[a.to] {
			if err := rec(a.to, rundir.GossipEvent{TimeNs: a.t, Node: net.Nodes[a.to], Kind: rundir.GossipUndeliverable, MsgID: m.ID}); err != nil {
				return err
			}
		}
		if err := forward(a.to, a.from, a.t); err != nil {
			return err
		}
	}
	return nil
}

// Names returns n node names host0 … host<n-1>.
func Names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("host%d", i)
	}
	return out
}

func writeProc(d *rundir.Dir, net Net, t0 int64) error {
	if err := os.MkdirAll(d.Join(rundir.Metrics), 0o755); err != nil {
		return err
	}
	var rows []rundir.Proc
	for k := 0; k < net.ProcSamples; k++ {
		for i, n := range append(slices.Clone(net.Nodes), rundir.HarnessNode) {
			pct := float64(i + 1)
			if n == rundir.HarnessNode {
				pct = 50
			}
			rows = append(rows, rundir.Proc{TimeNs: t0 + int64(k)*1e9, Node: n, PID: 1000 + i,
				RSSBytes: int64(20+i) << 20, CPUSeconds: pct / 100 * float64(k)})
		}
	}
	return rundir.ProcCSV.WriteFile(rundir.ProcCSV.Path(d), rows)
}
