// Command gossip benchmarks the gossip trace analysis (internal/kinds/gossipsub/analysis)
// on a synthetic run directory of millions of delivery records.
//
//	go run ./bench/gossip -gen -dir /tmp/gossipbench      # write the run dir
//	go run ./bench/gossip -dir /tmp/gossipbench           # analyse it, print figures
//
// Generation and analysis run in separate processes so the analysis's peak
// RSS is its own.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/topology"
)

func main() {
	dir := flag.String("dir", "/tmp/gossipbench", "run directory")
	gen := flag.Bool("gen", false, "write the synthetic run directory instead of analysing it")
	n := flag.Int("n", 95, "hosts")
	m := flag.Int("m", 6, "Barabasi-Albert m")
	deliveries := flag.Int("deliveries", 10_000_000, "delivery records (messages x (n-1))")
	fanout := flag.Int("fanout", 4, "forwards per host per message (duplicates ~ fanout-1 per host)")
	flag.Parse()
	if *gen {
		msgs := *deliveries / (*n - 1)
		e, err := topology.Edges(topology.Spec{Kind: topology.BarabasiAlbert, M: *m}, *n, 42)
		if err != nil {
			log.Fatal(err)
		}
		net := gossiptest.Net{Nodes: gossiptest.Names(*n), Adj: topology.Adjacency(*n, e), Delay: 5 * time.Millisecond,
			Fanout: *fanout, Seed: 1, ProcSamples: 60}
		if err := os.RemoveAll(*dir); err != nil {
			log.Fatal(err)
		}
		start := time.Now()
		rows, err := gossiptest.Write(*dir, net, gossiptest.Schedule(*n, msgs, 200, 1_700_000_000_000_000_000, 42))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("wrote %s: %d hosts, %d messages, %d expected deliveries, %d trace rows in %v\n",
			*dir, *n, msgs, msgs*(*n-1), rows, time.Since(start).Round(time.Millisecond))
		return
	}
	start := time.Now()
	res, err := analysis.Run(&rundir.Dir{Path: *dir})
	if err != nil {
		log.Fatal(err)
	}
	el := time.Since(start)
	g := res.Gossip
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("analysed %d messages, %d delivery records (MDR %.4f, %d delivered) in %v\n",
		g.Messages, g.Expected, g.MDR, g.Duplicates.N, el.Round(time.Millisecond))
	fmt.Printf("%.0f delivery records/s; peak RSS %d MiB; total allocated %d MiB; CPU user %.1fs sys %.1fs\n",
		float64(g.Expected)/el.Seconds(), ru.Maxrss>>10, ms.TotalAlloc>>20,
		time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds())
	fmt.Printf("dissemination p50 %.1f p99 %.1f ms; last-delivery hop p50 %.0f max %.0f; max hop p50 %.0f max %.0f\n",
		g.Dissemination.P50, g.Dissemination.P99, g.LastDeliveryHop.P50, g.LastDeliveryHop.Max, g.MaxHop.P50, g.MaxHop.Max)
}
