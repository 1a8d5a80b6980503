// Package collect records what the nodes and the machine do during a run:
// every Prometheus series of every node, per-process RSS and CPU, host load
// and the harness's own CPU. Everything is appended to the run directory as
// it comes and flushed every second, so an interrupted run keeps its data.
//
// Files written under metrics/ (record types and codecs in package rundir;
// times are unix nanoseconds): samples.csv.gz (rundir.SamplesCSV: one row
// per series per scrape, gzip sync-flushed, so a cut file reads up to its
// last flush), proc.csv (rundir.ProcCSV: per node process and the harness
// itself, node "benchnet"), host.csv (rundir.HostCSV), machines.csv
// (rundir.MachinesCSV: each machine of a cluster runner), scrape_errors.csv
// (rundir.ScrapeErrorsCSV: every failed scrape or /proc read) and
// machine.json (rundir.Machine).
package collect

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// SamplesFile is samples.csv.gz's name under metrics/, for messages.
var SamplesFile = path.Base(rundir.SamplesCSV.Name)

// Target is one node to watch. MetricsURL "" skips the Prometheus scrape
// (e.g. a socket app process); PID nil or returning 0 skips the /proc stats
// (a node not started yet, or restarting). Running, when set and false,
// skips both for that tick (a late start not yet due, a stopped rotating
// node): no sample and no scrape error for a node that is not meant to run.
type Target struct {
	Node       string
	MetricsURL string
	// URL, when set, is where to scrape now (MetricsURL when it says ""):
	// a node restarted on swarm may be published on other ports, and a
	// late or rotating one is reached only once it started.
	URL     func() string
	PID     func() int
	Running func() bool
}

func (t Target) running() bool { return t.Running == nil || t.Running() }

// Collector scrapes targets and samples /proc on a fixed interval.
type Collector struct {
	dir      *rundir.Dir
	targets  []Target
	interval time.Duration
	client   *http.Client

	// FlushEvery is how often buffered rows reach the files (default 1 s).
	FlushEvery time.Duration
	// Machines are the machines of a cluster runner, each scraped into
	// metrics/machines.csv (none: no such file).
	Machines []MachineTarget

	mu       sync.Mutex // guards the writers below
	samples  *rundir.Writer[rundir.Sample]
	proc     *rundir.Writer[rundir.Proc]
	host     *rundir.Writer[rundir.Host]
	machines *rundir.Writer[rundir.MachineLoad] // nil without Machines
	errs     *rundir.Writer[rundir.ScrapeError]
	failing  map[string]bool // node/source currently failing, for transition events
	scrapes  atomic.Int64
	failures atomic.Int64
	rows     atomic.Int64
	skipped  atomic.Int64
}

// Stats counts what a collector did.
type Stats struct {
	Scrapes  int64 // successful scrapes
	Failures int64 // failed scrapes and /proc reads
	Samples  int64 // sample rows written
	Skipped  int64 // ticks skipped because the previous scrape of that node was still running
}

// New returns a collector writing into dir/metrics every interval
// (default 1 s when interval <= 0).
func New(dir *rundir.Dir, targets []Target, interval time.Duration) *Collector {
	if interval <= 0 {
		interval = time.Second
	}
	return &Collector{
		dir: dir, targets: targets, interval: interval, FlushEvery: time.Second,
		client: &http.Client{
			Timeout: interval,
			// Keep-alive per node: one connection each, no new handshake per scrape.
			Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true, Proxy: nil},
		},
		failing: map[string]bool{},
	}
}

// Stats returns counters so far.
func (c *Collector) Stats() Stats {
	return Stats{Scrapes: c.scrapes.Load(), Failures: c.failures.Load(), Samples: c.rows.Load(), Skipped: c.skipped.Load()}
}

// Run collects until ctx is done, then flushes and closes its files. Failed
// scrapes are recorded and never stop it; only an unwritable run directory
// returns an error.
func (c *Collector) Run(ctx context.Context) error {
	if err := c.open(); err != nil {
		return err
	}
	if err := WriteMachine(c.dir); err != nil {
		c.recordError(time.Now(), "", "machine", err)
	}
	var wg sync.WaitGroup
	var scraped []Target
	for _, t := range c.targets {
		if t.MetricsURL != "" {
			scraped = append(scraped, t)
		}
	}
	for k, t := range scraped {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.scrapeLoop(ctx, t, phase(c.interval, k, len(scraped)))
		}()
	}
	for k, m := range c.Machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.machineLoop(ctx, m, phase(c.interval, k, len(c.Machines)))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.procLoop(ctx)
	}()
	flush := time.NewTicker(c.FlushEvery)
	defer flush.Stop()
	var werr error
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-flush.C:
			if err := c.flush(); err != nil && werr == nil {
				werr = err
			}
		}
	}
	wg.Wait()
	c.client.CloseIdleConnections()
	if err := c.close(); err != nil && werr == nil {
		werr = err
	}
	return werr
}

// phase is the delay of scrape loop k of n: the loops are spread evenly
// over the interval instead of all firing at the same instant, so the
// harness's scrape work and the nodes' answers come as n small bursts a
// second, not one burst that competes with the load's sends (and, at 95
// nodes, with itself).
func phase(interval time.Duration, k, n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return interval * time.Duration(k) / time.Duration(n)
}

// tick calls f on the interval grid, offset by phase, until ctx is done. A
// tick that arrives while f still runs is dropped by time.Ticker and
// counted as skipped.
func (c *Collector) tick(ctx context.Context, phase time.Duration, f func(time.Time)) {
	if phase > 0 {
		wait := time.NewTimer(phase)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
	t := time.NewTicker(c.interval)
	defer t.Stop()
	f(time.Now())
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n := int64(now.Sub(last)/c.interval) - 1; n > 0 {
				c.skipped.Add(n)
			}
			last = now
			f(now)
		}
	}
}

func (c *Collector) scrapeLoop(ctx context.Context, t Target, phase time.Duration) {
	buf := &promtext.Parser{}
	c.tick(ctx, phase, func(now time.Time) {
		if !t.running() {
			return
		}
		buf.Reset()
		err := c.scrape(ctx, t, buf)
		if ctx.Err() != nil {
			return // a scrape cut by the end of the run is no failure
		}
		if err != nil {
			c.recordError(now, t.Node, "metrics", err)
			return
		}
		c.recovered(now, t.Node, "metrics")
		c.scrapes.Add(1)
		c.writeSamples(now, t.Node, buf)
		if t.PID == nil || t.PID() <= 0 {
			c.remoteProc(now, t.Node, buf)
		}
	})
}

// remoteProc writes a proc.csv row (pid 0) from a node's own process
// metrics when /proc cannot see it: a node on another machine (a swarm
// task elsewhere). Go's Prometheus process collector, which CometBFT
// registers, reports the same RSS and CPU time /proc would.
func (c *Collector) remoteProc(now time.Time, node string, buf *promtext.Parser) {
	row := rundir.Proc{TimeNs: now.UnixNano(), Node: node}
	var rss, cpu bool
	for _, s := range buf.Samples {
		switch {
		case s.Name == "process_resident_memory_bytes" && s.Labels == "":
			row.RSSBytes, rss = int64(s.Value), true
		case s.Name == "process_cpu_seconds_total" && s.Labels == "":
			row.CPUSeconds, cpu = s.Value, true
		}
	}
	if !rss || !cpu {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.proc.Write(&row)
}

func (c *Collector) scrape(ctx context.Context, t Target, buf *promtext.Parser) error {
	if t.URL != nil {
		if u := t.URL(); u != "" {
			t.MetricsURL = u
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.MetricsURL, nil)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", t.MetricsURL, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("scrape %s: HTTP %s", t.MetricsURL, resp.Status)
	}
	if err := buf.Parse(resp.Body); err != nil {
		return fmt.Errorf("scrape %s: parse exposition: %w", t.MetricsURL, err)
	}
	return nil
}

func (c *Collector) procLoop(ctx context.Context) {
	self := os.Getpid()
	c.tick(ctx, 0, func(now time.Time) {
		ts := now.UnixNano()
		var rows []rundir.Proc
		for _, t := range c.targets {
			if t.PID == nil || !t.running() {
				continue
			}
			pid := t.PID()
			if pid <= 0 {
				continue
			}
			p, err := ReadProcTree(pid)
			if err != nil {
				c.recordError(now, t.Node, "proc", err)
				continue
			}
			c.recovered(now, t.Node, "proc")
			rows = append(rows, procRow(ts, t.Node, pid, p))
		}
		if p, err := ReadProc(self); err == nil {
			rows = append(rows, procRow(ts, rundir.HarnessNode, self, p))
		}
		h, err := ReadHost()
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := range rows {
			_ = c.proc.Write(&rows[i])
		}
		if err == nil {
			h.TimeNs = ts
			_ = c.host.Write(&h)
		}
	})
}

func procRow(ts int64, node string, pid int, p Proc) rundir.Proc {
	return rundir.Proc{TimeNs: ts, Node: node, PID: pid, RSSBytes: p.RSSBytes, CPUSeconds: p.CPUSeconds}
}

func (c *Collector) writeSamples(now time.Time, node string, buf *promtext.Parser) {
	row := rundir.Sample{TimeNs: now.UnixNano(), Node: node}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range buf.Samples {
		row.Metric, row.Labels, row.Value = s.Name, s.Labels, s.Value
		_ = c.samples.Write(&row)
	}
	c.rows.Add(int64(len(buf.Samples)))
}

// recordError appends a failure to scrape_errors.csv and, when a node/source
// starts failing, an event, so the report shows it on the time axis without
// one event per second.
func (c *Collector) recordError(now time.Time, node, source string, err error) {
	c.failures.Add(1)
	c.mu.Lock()
	key := node + "/" + source
	first := !c.failing[key]
	c.failing[key] = true
	if c.errs != nil {
		_ = c.errs.Write(&rundir.ScrapeError{TimeNs: now.UnixNano(), Node: node, Source: source, Error: err.Error()})
	}
	c.mu.Unlock()
	if first {
		_ = c.dir.Event(rundir.EventScrapeFailed, node, source+": "+err.Error())
	}
}

func (c *Collector) recovered(now time.Time, node, source string) {
	c.mu.Lock()
	key := node + "/" + source
	was := c.failing[key]
	delete(c.failing, key)
	c.mu.Unlock()
	if was {
		_ = c.dir.Event(rundir.EventScrapeRecovered, node, source)
	}
}

func (c *Collector) open() error {
	if err := os.MkdirAll(c.dir.Join(rundir.Metrics), 0o755); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	var err error
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples, err = rundir.SamplesCSV.Create(rundir.SamplesCSV.Path(c.dir)); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if c.proc, err = rundir.ProcCSV.Create(rundir.ProcCSV.Path(c.dir)); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if c.host, err = rundir.HostCSV.Create(rundir.HostCSV.Path(c.dir)); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if c.errs, err = rundir.ScrapeErrorsCSV.Create(rundir.ScrapeErrorsCSV.Path(c.dir)); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if len(c.Machines) > 0 {
		if c.machines, err = rundir.MachinesCSV.Create(rundir.MachinesCSV.Path(c.dir)); err != nil {
			return fmt.Errorf("collect: %w", err)
		}
	}
	// The headers reach the files at once: a run killed in its first
	// second still leaves readable files.
	for _, f := range c.files() {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("collect: %w", err)
		}
	}
	return nil
}

// flusher is what every metrics file's writer does.
type flusher interface {
	Flush() error
	Close() error
}

func (c *Collector) files() []flusher {
	fs := []flusher{c.samples, c.proc, c.host, c.errs}
	if c.machines != nil {
		fs = append(fs, c.machines)
	}
	return fs
}

func (c *Collector) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.files() {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("collect: %w", err)
		}
	}
	return nil
}

func (c *Collector) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, f := range c.files() {
		if err := f.Close(); err != nil && first == nil {
			first = fmt.Errorf("collect: %w", err)
		}
	}
	return first
}
