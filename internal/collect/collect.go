// Package collect records what the nodes and the machine do during a run:
// every Prometheus series of every node, per-process RSS and CPU, host load
// and the harness's own CPU. Everything is appended to the run directory as
// it comes and flushed every second, so an interrupted run keeps its data.
//
// Files written under metrics/ (times are unix nanoseconds):
//
//	samples.csv.gz     time_ns,node,metric,labels,value — one row per series per scrape;
//	                   labels in exposition syntax, sorted: {chain_id="x",le="0.5"};
//	                   histograms/summaries flattened to _bucket/_sum/_count rows as
//	                   in the text format. gzip is sync-flushed, so a cut file reads
//	                   up to its last flush.
//	proc.csv           time_ns,node,pid,rss_bytes,cpu_seconds — per node process and
//	                   the harness itself (node "benchnet")
//	host.csv           time_ns,load1,load5,load15,cpu_busy_seconds,cpu_total_seconds,cpus
//	scrape_errors.csv  time_ns,node,source,error — every failed scrape or /proc read
//	machine.json       the machine the run ran on (Machine)
package collect

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/rundir"
)

// File names under rundir.Metrics.
const (
	SamplesFile     = "samples.csv.gz"
	ProcFile        = "proc.csv"
	HostFile        = "host.csv"
	ScrapeErrorFile = "scrape_errors.csv"
	MachineFile     = "machine.json"
	// HarnessNode names the harness's own row in proc.csv.
	HarnessNode = "benchnet"
)

// CSV headers, shared with readers.
var (
	SamplesHeader     = []string{"time_ns", "node", "metric", "labels", "value"}
	ProcHeader        = []string{"time_ns", "node", "pid", "rss_bytes", "cpu_seconds"}
	HostHeader        = []string{"time_ns", "load1", "load5", "load15", "cpu_busy_seconds", "cpu_total_seconds", "cpus"}
	ScrapeErrorHeader = []string{"time_ns", "node", "source", "error"}
)

// Target is one node to watch. MetricsURL "" skips the Prometheus scrape
// (e.g. a socket app process); PID nil or returning 0 skips the /proc stats
// (a node not started yet, or restarting).
type Target struct {
	Node       string
	MetricsURL string
	PID        func() int
}

// Collector scrapes targets and samples /proc on a fixed interval.
type Collector struct {
	dir      *rundir.Dir
	targets  []Target
	interval time.Duration
	client   *http.Client

	// FlushEvery is how often buffered rows reach the files (default 1 s).
	FlushEvery time.Duration

	mu       sync.Mutex // guards the writers below
	samples  *csvFile
	proc     *csvFile
	host     *csvFile
	errs     *csvFile
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
	for _, t := range c.targets {
		if t.MetricsURL == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.scrapeLoop(ctx, t)
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

// tick calls f on the interval grid until ctx is done. A tick that arrives
// while f still runs is dropped by time.Ticker and counted as skipped.
func (c *Collector) tick(ctx context.Context, f func(time.Time)) {
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

func (c *Collector) scrapeLoop(ctx context.Context, t Target) {
	buf := &sampleBuf{}
	c.tick(ctx, func(now time.Time) {
		buf.reset()
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
	})
}

func (c *Collector) scrape(ctx context.Context, t Target, buf *sampleBuf) error {
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
	if err := parseExposition(resp.Body, buf); err != nil {
		return fmt.Errorf("scrape %s: %w", t.MetricsURL, err)
	}
	return nil
}

func (c *Collector) procLoop(ctx context.Context) {
	self := os.Getpid()
	c.tick(ctx, func(now time.Time) {
		ts := strconv.FormatInt(now.UnixNano(), 10)
		var rows [][]string
		for _, t := range c.targets {
			if t.PID == nil {
				continue
			}
			pid := t.PID()
			if pid <= 0 {
				continue
			}
			p, err := ReadProc(pid)
			if err != nil {
				c.recordError(now, t.Node, "proc", err)
				continue
			}
			c.recovered(now, t.Node, "proc")
			rows = append(rows, procRow(ts, t.Node, pid, p))
		}
		if p, err := ReadProc(self); err == nil {
			rows = append(rows, procRow(ts, HarnessNode, self, p))
		}
		h, err := ReadHost()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, r := range rows {
			_ = c.proc.w.Write(r)
		}
		if err == nil {
			_ = c.host.w.Write([]string{ts, fmtFloat(h.Load1), fmtFloat(h.Load5), fmtFloat(h.Load15),
				fmtFloat(h.CPUBusySeconds), fmtFloat(h.CPUTotalSeconds), strconv.Itoa(h.CPUs)})
		}
	})
}

func procRow(ts, node string, pid int, p Proc) []string {
	return []string{ts, node, strconv.Itoa(pid), strconv.FormatInt(p.RSSBytes, 10), fmtFloat(p.CPUSeconds)}
}

func (c *Collector) writeSamples(now time.Time, node string, buf *sampleBuf) {
	ts := strconv.FormatInt(now.UnixNano(), 10)
	row := make([]string, 5)
	row[0], row[1] = ts, node
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range buf.samples {
		row[2], row[3], row[4] = s.name, s.labels, fmtFloat(s.value)
		_ = c.samples.w.Write(row)
	}
	c.rows.Add(int64(len(buf.samples)))
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
		_ = c.errs.w.Write([]string{strconv.FormatInt(now.UnixNano(), 10), node, source, err.Error()})
	}
	c.mu.Unlock()
	if first {
		_ = c.dir.Event("scrape_failed", node, source+": "+err.Error())
	}
}

func (c *Collector) recovered(now time.Time, node, source string) {
	c.mu.Lock()
	key := node + "/" + source
	was := c.failing[key]
	delete(c.failing, key)
	c.mu.Unlock()
	if was {
		_ = c.dir.Event("scrape_recovered", node, source)
	}
}

func (c *Collector) open() error {
	if err := os.MkdirAll(c.dir.Join(rundir.Metrics), 0o755); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	var err error
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples, err = createCSV(c.dir.Join(rundir.Metrics, SamplesFile), true, SamplesHeader); err != nil {
		return err
	}
	if c.proc, err = createCSV(c.dir.Join(rundir.Metrics, ProcFile), false, ProcHeader); err != nil {
		return err
	}
	if c.host, err = createCSV(c.dir.Join(rundir.Metrics, HostFile), false, HostHeader); err != nil {
		return err
	}
	if c.errs, err = createCSV(c.dir.Join(rundir.Metrics, ScrapeErrorFile), false, ScrapeErrorHeader); err != nil {
		return err
	}
	return nil
}

func (c *Collector) files() []*csvFile { return []*csvFile{c.samples, c.proc, c.host, c.errs} }

func (c *Collector) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.files() {
		if err := f.flush(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Collector) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, f := range c.files() {
		if err := f.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// csvFile is an append-only CSV file, optionally gzip-compressed.
type csvFile struct {
	name string
	f    *os.File
	gz   *gzip.Writer
	w    *csv.Writer
}

func createCSV(path string, compress bool, header []string) (*csvFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("collect: create %s: %w", filepath.Base(path), err)
	}
	c := &csvFile{name: filepath.Base(path), f: f}
	var w io.Writer = f
	if compress {
		// BestSpeed: the samples compress ~10x even so, and CPU is the scarce thing.
		c.gz, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = c.gz
	}
	c.w = csv.NewWriter(w)
	_ = c.w.Write(header)
	return c, c.flush()
}

func (c *csvFile) flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("collect: write %s: %w", c.name, err)
	}
	if c.gz != nil {
		if err := c.gz.Flush(); err != nil {
			return fmt.Errorf("collect: write %s: %w", c.name, err)
		}
	}
	return nil
}

func (c *csvFile) close() error {
	err := c.flush()
	if c.gz != nil {
		if cerr := c.gz.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("collect: close %s: %w", c.name, cerr)
		}
	}
	if cerr := c.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("collect: close %s: %w", c.name, cerr)
	}
	return err
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
