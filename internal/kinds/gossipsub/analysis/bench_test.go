package analysis

import (
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/topology"
)

// BenchmarkRun analyses a synthetic run of 95 hosts and ~100 k delivery
// records per iteration (bench/gossip does 10 M); b.N runs report
// delivery records/s.
func BenchmarkRun(b *testing.B) {
	const n = 95
	e, err := topology.Edges(topology.Spec{Kind: topology.BarabasiAlbert, M: 6}, n, 42)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: topology.Adjacency(n, e), Delay: 5 * time.Millisecond, Fanout: 4, Seed: 1}
	if _, err := gossiptest.Write(dir, net, gossiptest.Schedule(n, 1064, 200, t0, 42)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	records := 0
	for i := 0; i < b.N; i++ {
		res, err := Run(&rundir.Dir{Path: dir})
		if err != nil {
			b.Fatal(err)
		}
		records += res.Gossip.Expected
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
