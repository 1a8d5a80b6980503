// Command collect measures what scraping costs (not a test; see
// bench/README.md): -targets in-process HTTP servers serve a real CometBFT
// exposition, the collector scrapes each every -interval for -dur, and the
// process's CPU over that time is printed per scrape and as a share of one
// core. The servers run in this process too, so the figure is an upper
// bound on the collector's own CPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/rundir"
)

func main() {
	expoPath := flag.String("exposition", "internal/collect/testdata/cometbft-v1.0.1.prom", "Prometheus exposition each target serves (from the repository root)")
	n := flag.Int("targets", 4, "scrape targets")
	interval := flag.Duration("interval", time.Second, "scrape interval")
	dur := flag.Duration("dur", 10*time.Second, "how long to collect")
	flag.Parse()
	if err := run(*expoPath, *n, *interval, *dur); err != nil {
		log.Fatal(err)
	}
}

func run(expoPath string, n int, interval, dur time.Duration) error {
	expo, err := os.ReadFile(expoPath)
	if err != nil {
		return err
	}
	var hits atomic.Int64
	var targets []collect.Target
	for i := range n {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			_, _ = w.Write(expo)
		}))
		defer s.Close()
		targets = append(targets, collect.Target{Node: fmt.Sprint("n", i), MetricsURL: s.URL, PID: os.Getpid})
	}
	tmp, err := os.MkdirTemp("", "bench-collect-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir, err := rundir.Create(tmp, "cpu", time.Now())
	if err != nil {
		return err
	}
	defer dir.Close()
	before, err := collect.ReadProc(os.Getpid())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	c := collect.New(dir, targets, interval)
	if err := c.Run(ctx); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	after, err := collect.ReadProc(os.Getpid())
	if err != nil {
		return err
	}
	cpu := after.CPUSeconds - before.CPUSeconds
	st := c.Stats()
	fi, err := os.Stat(rundir.SamplesCSV.Path(dir))
	if err != nil {
		return err
	}
	want := int64(float64(n) * dur.Seconds() / interval.Seconds())
	fmt.Printf("%d targets x every %s x %s: %d scrapes (schedule %d), %d served, %d sample rows, %d failures, samples.csv.gz %d bytes\n",
		n, interval, dur, st.Scrapes, want, hits.Load(), st.Samples, st.Failures, fi.Size())
	fmt.Printf("process CPU %.2f s: %.1f ms per scrape, %.1f%% of one core\n",
		cpu, 1000*cpu/math.Max(1, float64(st.Scrapes)), 100*cpu/dur.Seconds())
	if st.Failures != 0 {
		return fmt.Errorf("%d scrapes failed", st.Failures)
	}
	return nil
}
