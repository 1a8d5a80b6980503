package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/topology"
)

// The per-message units recompute each figure exactly as the analysis
// computed it from every delivery: on the identity resample they give
// results.json's values (which are rounded to 3 decimals, MDR to 6).
func TestGossipUnitsMatchAnalysis(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	e, err := topology.Edges(topology.Spec{Kind: topology.BarabasiAlbert, M: 2}, n, 42)
	if err != nil {
		t.Fatal(err)
	}
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: topology.Adjacency(n, e), Delay: 25 * time.Millisecond,
		Fanout: 3, Seed: 7, ProcSamples: 5, DropTo: map[int]bool{7: true}}
	if _, err := gossiptest.Write(dir, net, gossiptest.Schedule(n, 80, 20, 1_700_000_000_000_000_000, 7)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(&rundir.Dir{Path: dir}); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Inner == nil {
		t.Fatal("no per-message units")
	}
	if f.Values["mdr"] >= 100 {
		t.Fatalf("the dropped host should cost deliveries: MDR %v", f.Values["mdr"])
	}
	for _, m := range metrics.Metrics {
		v, ok := f.Values[m.Key]
		if !ok {
			t.Errorf("%s: no run value", m.Key)
			continue
		}
		u, ok := f.Inner(m.Key)
		if strings.HasPrefix(m.Key, "host_") {
			if ok {
				t.Errorf("%s has per-message units; want run values only", m.Key)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no per-message units", m.Key)
			continue
		}
		if got := u.Observed(); math.Abs(got-v) > 1e-3*math.Max(1, math.Abs(v)) {
			t.Errorf("%s: recomputed from the messages %v, results.json %v", m.Key, got, v)
		}
	}
}
