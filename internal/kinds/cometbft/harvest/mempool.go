package harvest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/rundir"
)

// DrainResult says how the wait for empty mempools ended.
type DrainResult struct {
	Drained bool          // every node answered 0 in one round
	Waited  time.Duration // from the call to the end of the wait
	// Last holds each node's last answer; Unreachable the nodes whose last
	// poll failed (a dead node keeps Drained false until grace passes).
	Last        map[string]int
	Unreachable []string
}

func (d DrainResult) String() string {
	if d.Drained {
		return fmt.Sprintf("mempools drained after %s", d.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("mempools not drained after %s: %s", d.Waited.Round(time.Millisecond), d.left())
}

// left lists the nodes with txs left and those that did not answer.
func (d DrainResult) left() string {
	var left []string
	for n, s := range d.Last {
		if s > 0 {
			left = append(left, fmt.Sprintf("%s=%d", n, s))
		}
	}
	sort.Strings(left)
	var parts []string
	if len(left) > 0 {
		parts = append(parts, "txs left: "+strings.Join(left, " "))
	}
	if len(d.Unreachable) > 0 {
		parts = append(parts, "unreachable: "+strings.Join(d.Unreachable, " "))
	}
	return strings.Join(parts, "; ")
}

// Record is the drain as harvest.json records it. grace is the manifest's
// load.grace, bound the longest this drain was allowed to wait (grace, or
// less for an interrupted run). The drain is complete when the mempools
// emptied or the whole grace period passed (a drain that was not
// interrupted always waits that long): only then is a tx in no block lost
// rather than pending.
func (d DrainResult) Record(grace, bound time.Duration, interrupted bool) *rundir.Drain {
	r := &rundir.Drain{
		Complete: d.Drained || !interrupted || d.Waited >= grace, Empty: d.Drained, Interrupted: interrupted,
		WaitedSec: rundir.DrainSeconds(d.Waited), BoundSec: rundir.DrainSeconds(bound), GraceSec: rundir.DrainSeconds(grace),
		Unreachable: append([]string(nil), d.Unreachable...),
	}
	if !d.Drained {
		r.Left = d.left()
	}
	if len(r.Unreachable) == 0 {
		r.Unreachable = nil
	}
	return r
}

// DrainInterval is how often Drain polls.
var DrainInterval = 200 * time.Millisecond

// Drain polls every node's mempool after the last send until all are empty
// in the same round, or grace passes (Drained false; not an error: the
// report says which). It returns an error only when ctx is cancelled.
func Drain(ctx context.Context, nodes []Node, grace time.Duration) (DrainResult, error) {
	start := time.Now()
	deadline := start.Add(grace)
	clients := make([]*cometrpc.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = cometrpc.New(n.URL)
	}
	res := DrainResult{Last: map[string]int{}}
	for {
		sizes, errs := pollAll(ctx, nodes, clients)
		res.Unreachable = res.Unreachable[:0]
		empty := true
		for i, n := range nodes {
			if errs[i] != nil {
				res.Unreachable = append(res.Unreachable, n.Name)
				empty = false
				continue
			}
			res.Last[n.Name] = sizes[i]
			if sizes[i] != 0 {
				empty = false
			}
		}
		res.Waited = time.Since(start)
		if empty {
			res.Drained = true
			return res, nil
		}
		if !time.Now().Before(deadline) {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("drain: %w", ctx.Err())
		case <-time.After(min(DrainInterval, time.Until(deadline))):
		}
	}
}

// pollAll asks every node at once, so one slow node does not skew the
// others' sample times.
func pollAll(ctx context.Context, nodes []Node, clients []*cometrpc.Client) ([]int, []error) {
	sizes, errs := make([]int, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if nodes[i].AppPool {
				sizes[i], errs[i] = clients[i].AppPoolSize(ctx)
			} else {
				sizes[i], errs[i] = clients[i].NumUnconfirmedTxs(ctx)
			}
		}()
	}
	wg.Wait()
	return sizes, errs
}

// MempoolPoller appends every node's num_unconfirmed_txs to mempool.csv
// every Interval while Run runs, flushing each round, and keeps the peaks.
type MempoolPoller struct {
	Path     string // e.g. <run dir>/mempool.csv
	Nodes    []Node
	Interval time.Duration // default 500 ms
	// Running, when set, says whether a node runs now: a node that does
	// not (a late start not yet due, a stopped rotating node) is not
	// polled that round, so it has no row and no failed poll until it
	// starts. Nil: every node runs.
	Running func(node string) bool

	mu     sync.Mutex
	peak   map[string]int
	errors int
}

// NewMempoolPoller polls nodes into dir/mempool.csv.
func NewMempoolPoller(dir string, nodes []Node, interval time.Duration) *MempoolPoller {
	return &MempoolPoller{Path: filepath.Join(dir, rundir.MempoolCSV.Name), Nodes: nodes, Interval: interval}
}

// Run polls until ctx is done and returns the peak size over all nodes. A
// failed poll writes no row (a gap in the series) and is counted in Errors.
func (p *MempoolPoller) Run(ctx context.Context) (int, error) {
	if p.Interval <= 0 {
		p.Interval = 500 * time.Millisecond
	}
	p.mu.Lock()
	p.peak = map[string]int{}
	p.mu.Unlock()
	w, err := rundir.MempoolCSV.Append(p.Path)
	if err != nil {
		return 0, fmt.Errorf("mempool poller: %w", err)
	}
	defer w.Close()
	clients := make([]*cometrpc.Client, len(p.Nodes))
	for i, n := range p.Nodes {
		clients[i] = cometrpc.New(n.URL)
	}
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	for {
		now := time.Now().UnixNano()
		nodes, cls := p.Nodes, clients
		if p.Running != nil {
			nodes, cls = nil, nil
			for i, n := range p.Nodes {
				if p.Running(n.Name) {
					nodes, cls = append(nodes, n), append(cls, clients[i])
				}
			}
		}
		sizes, errs := pollAll(ctx, nodes, cls)
		p.mu.Lock()
		for i, n := range nodes {
			if errs[i] != nil {
				if ctx.Err() == nil {
					p.errors++
				}
				continue
			}
			_ = w.Write(&rundir.MempoolSample{TimeNs: now, Node: n.Name, Size: sizes[i]})
			p.peak[n.Name] = max(p.peak[n.Name], sizes[i])
		}
		p.mu.Unlock()
		if err := w.Flush(); err != nil {
			return p.Peak(), fmt.Errorf("mempool poller: %w", err)
		}
		select {
		case <-ctx.Done():
			return p.Peak(), nil
		case <-tick.C:
		}
	}
}

// Peak is the largest size seen on any node so far.
func (p *MempoolPoller) Peak() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := 0
	for _, v := range p.peak {
		m = max(m, v)
	}
	return m
}

// Peaks is the largest size seen per node so far.
func (p *MempoolPoller) Peaks() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.peak)
}

// Errors is how many polls failed so far.
func (p *MempoolPoller) Errors() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errors
}
