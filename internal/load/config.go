// Package load is benchnet's open-loop load generator. Every connection sends
// on its own schedule (t0 + offset(i), never "a batch per second"), never
// waits for responses before the next send, records the intended and the
// actual send time of every tx (so client-side queueing is visible, not
// hidden: no coordinated omission), and certifies itself: a run whose
// generator fell behind is marked invalid rather than blamed on the network.
//
// Connections (decided with CometBFT's QA method in mind, where the `load`
// tool gets -c connections at -r tx/s each and the expected count is
// c × r × duration):
//
//	single       Connections connections to the first target
//	round-robin  Connections connections in total, connection k to target k mod len(targets)
//	             (the QA method's c × r spread over the nodes)
//	all          Connections connections to EVERY target (c × r per node)
//
// Total txs: with Count > 0 exactly Count, split over the connections as
// evenly as possible (the first Count mod n get one more). Otherwise every
// connection sends TicksWithin(schedule, Duration) txs — ceil(Rate ×
// Duration) for a constant rate, which is Rate × Duration for integer
// values — so the total is (number of connections) × Rate × Duration, the
// QA method's c × r × duration.
package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Config mirrors manifest.Load, plus the run id written into every tx.
type Config struct {
	RunID       string
	Rate        float64 // tx/s per connection (the ramp's end rate)
	Connections int
	Duration    time.Duration
	Count       int // exact total number of txs; overrides Duration
	Size        int // exact byte size of every tx
	Shape       string
	RampFrom    float64
	Target      string // round-robin | all | single
	Transport   string // websocket | http
	Method      string // async | sync
	Format      string // kv | loadtime
	Keys        string // unique | fixed

	// The accounts workload (accounts.go): Workload "accounts" replaces
	// the payload and connection layout above.
	Workload      string // kv | accounts
	Accounts      int
	TxsPerAccount int
	Order         string // sequential | out-of-order
	WriteKeys     int
	Seed          int64 // the testnet's seed: account keys derive from it

	// InFlight bounds concurrent HTTP requests per connection (default 16);
	// when all are busy the next tx waits and its lag shows.
	InFlight int
	// Drain is how long to wait for outstanding responses after the last
	// send (default 10s); still-unanswered txs are then send_error rows.
	Drain time.Duration
	// Ordinary paces on ordinary threads: no real-time pacing thread (see
	// Runner.Run). For comparisons (bench/load); runs keep the default.
	Ordinary bool

	clock Clock // nil: the real clock
}

// FromManifest builds a Config from the manifest's [load] table.
func FromManifest(l manifest.Load, runID string) Config {
	return Config{
		RunID: runID, Rate: l.Rate, Connections: l.Connections, Duration: l.Duration.Duration,
		Count: l.Count, Size: l.Size, Shape: l.Shape, RampFrom: l.RampFrom, Target: l.Target,
		Transport: l.Transport, Method: l.Method, Format: l.Format, Keys: l.Keys,
		Workload: l.Workload, Accounts: l.Accounts, TxsPerAccount: l.TxsPerAccount, Order: l.Order, WriteKeys: l.WriteKeys,
	}
}

// Target is one node the load is sent to.
type Target struct {
	Node   string // plan node name, written into sent.csv
	RPCURL string // http://ADDR:26657
	// URL, when set, gives the node's RPC URL now, and every (re)connect
	// reads it: a restarted swarm task is published on new ports, and a
	// connection that kept RPCURL would lose its share of the load.
	URL func() string
}

// rpc is where t's connections dial, read at each dial.
func (t Target) rpc() func() string {
	if t.URL != nil {
		return t.URL
	}
	u := t.RPCURL
	return func() string { return u }
}

func (c *Config) setDefaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.Shape, "constant")
	def(&c.Target, "round-robin")
	def(&c.Transport, "websocket")
	def(&c.Method, "async")
	def(&c.Format, "kv")
	def(&c.Keys, "unique")
	def(&c.Workload, manifest.WorkloadKV)
	if c.InFlight <= 0 {
		c.InFlight = 16
	}
	if c.Drain <= 0 {
		c.Drain = 10 * time.Second
	}
	if c.clock == nil {
		c.clock = realClock{}
	}
}

// validate applies the manifest's [load] rules (manifest.CheckLoad, their
// one owner) to a Config built in code: a Config made by FromManifest from a
// validated manifest passes by construction. What only this package knows,
// the exact payload minimum for this load, is NewCodec's check.
func (c *Config) validate() error {
	l := manifest.Load{
		Rate: c.Rate, Connections: c.Connections, Duration: rundir.Duration{Duration: c.Duration},
		Count: c.Count, Size: c.Size, Shape: c.Shape, RampFrom: c.RampFrom, Target: c.Target,
		Transport: c.Transport, Method: c.Method, Format: c.Format, Keys: c.Keys,
		Workload: c.Workload, Accounts: c.Accounts, TxsPerAccount: c.TxsPerAccount, Order: c.Order, WriteKeys: c.WriteKeys,
		LatencyBlock: manifest.DefaultLatencyBlk, // not the generator's concern
	}
	if errs := manifest.CheckLoad(l, 1); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("load: %s", strings.Join(msgs, "; "))
	}
	if c.Workload == manifest.WorkloadAccounts {
		return nil // NewRunner signs; no payload size to check
	}
	_, err := NewCodec(*c)
	return err
}

// schedule is every connection's schedule.
func (c *Config) schedule() Schedule {
	if c.Shape == "ramp" {
		return Ramp{From: c.RampFrom, To: c.Rate, D: c.Duration}
	}
	return Constant{R: c.Rate}
}

// connPlan is one connection: its target and its share of the txs.
type connPlan struct {
	idx    int
	target Target
	n      int    // txs this connection sends
	seq0   uint64 // seq of its first tx; seqs are seq0..seq0+n-1
}

// plan lays out the connections (see the package comment) and their counts.
func (c *Config) plan(targets []Target) ([]connPlan, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("load: no targets")
	}
	if c.Workload == manifest.WorkloadAccounts {
		return c.accountsPlan(targets)
	}
	var conns []connPlan
	add := func(t Target) { conns = append(conns, connPlan{idx: len(conns), target: t}) }
	switch c.Target {
	case "single":
		for range c.Connections {
			add(targets[0])
		}
	case "round-robin":
		for k := range c.Connections {
			add(targets[k%len(targets)])
		}
	case "all":
		for _, t := range targets {
			for range c.Connections {
				add(t)
			}
		}
	}
	var seq uint64
	for k := range conns {
		if c.Count > 0 {
			conns[k].n = c.Count / len(conns)
			if k < c.Count%len(conns) {
				conns[k].n++
			}
		} else {
			conns[k].n = TicksWithin(c.schedule(), c.Duration)
		}
		conns[k].seq0 = seq
		seq += uint64(conns[k].n)
	}
	return conns, nil
}

// Expected is the exact number of txs Run attempts for cfg and targets.
func Expected(cfg Config, targets []Target) (int, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return 0, err
	}
	conns, err := cfg.plan(targets)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range conns {
		total += c.n
	}
	return total, nil
}
