package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/figures"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	gossipmetrics "github.com/benchnet/benchnet/internal/kinds/gossipsub/metrics"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/topology"
)

// gossipRun writes a synthetic gossip run (gossiptest's flood on a graph,
// 25 ms per hop) and its analysis.
func gossipRun(t *testing.T, dir string, spec topology.Spec, seed uint64) {
	t.Helper()
	const n = 16
	e, err := topology.Edges(spec, n, 42)
	if err != nil {
		t.Fatal(err)
	}
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: topology.Adjacency(n, e), Delay: 25 * time.Millisecond,
		Fanout: 3, Seed: seed, ProcSamples: 5, DropTo: map[int]bool{int(seed) % n: true}}
	if _, err := gossiptest.Write(dir, net, gossiptest.Schedule(n, 80, 20, 1_700_000_000_000_000_000, seed)); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(&rundir.Dir{Path: dir}); err != nil {
		t.Fatal(err)
	}
}

var ba2 = topology.Spec{Kind: topology.BarabasiAlbert, M: 2}

func TestCompareDirsGossip(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, spec topology.Spec, seed uint64) string {
		d := filepath.Join(root, name)
		gossipRun(t, d, spec, seed)
		return d
	}
	line := topology.Spec{Kind: topology.Line}
	a1, a2 := mk("line-1", line, 1), mk("line-2", line, 2)
	b1, b2 := mk("m6-1", topology.Spec{Kind: topology.BarabasiAlbert, M: 6}, 1), mk("m6-2", topology.Spec{Kind: topology.BarabasiAlbert, M: 6}, 2)
	cfg := DefaultCompare()
	out := filepath.Join(root, "out")
	_, idx, err := CompareDirs([]DirVariant{{Name: "m2", Dirs: []string{a1, a2}}, {Name: "m6", Dirs: []string{b1, b2}}}, cfg, out, false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if idx.NodeKind != spec.Name {
		t.Fatalf("node kind %q, want gossipsub", idx.NodeKind)
	}
	if !strings.Contains(idx.Rule, "messages within each run") {
		t.Errorf("rule %q does not say messages are resampled", idx.Rule)
	}
	if len(idx.Verdicts) != 1 || len(idx.Verdicts[0].Judgements) != len(gossipmetrics.Metrics) {
		t.Fatalf("verdicts %+v, want one variant judged on %d gossip metrics", idx.Verdicts, len(gossipmetrics.Metrics))
	}
	byKey := map[string]judge.Judgement{}
	for _, j := range idx.Verdicts[0].Judgements {
		byKey[j.Metric] = j
	}
	// A Barabási–Albert graph of m = 6 is far shallower than a line.
	for _, k := range []string{"max_hop", "last_delivery_hop", "dissemination_avg", "last_delivery_p99"} {
		if j := byKey[k]; j.Basis != "runs+messages" || j.Verdict != judge.OutcomeImprovement {
			t.Errorf("%s m6 vs line: %+v, want an improvement over runs+messages", k, j)
		}
	}
	// Host CPU has no per-message form: 2 runs per side decide nothing.
	if j := byKey["host_cpu_avg"]; j.Basis != "runs" || j.Verdict != judge.OutcomeInconclusive {
		t.Errorf("host CPU: %+v, want inconclusive over runs", j)
	}

	// A/A: the same runs on both sides change nothing.
	_, aa, err := CompareDirs([]DirVariant{{Name: "a", Dirs: []string{a1, a2}}, {Name: "b", Dirs: []string{a1, a2}}}, cfg, out, false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range aa.Verdicts[0].Judgements {
		if j.Verdict != judge.OutcomeSame && j.Verdict != judge.OutcomeInconclusive {
			t.Errorf("A/A %s: %s", j.Metric, j.Verdict)
		}
	}

	// A tx metric is not one of a gossip run's.
	bad := DefaultCompare()
	bad.FailOn = []string{"tps"}
	_, _, err = CompareDirs([]DirVariant{{Name: "a", Dirs: []string{a1}}, {Name: "b", Dirs: []string{b1}}}, bad, out, false, time.Unix(0, 0))
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "tps") {
		t.Errorf("fail_on tps on gossip runs: %v, want a refusal naming it", err)
	}

	// An invalid run is left out of the verdicts, with a warning.
	res, err := (&rundir.Dir{Path: b2}).ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	res.Valid, res.Invalid = false, []string{"publish: lag p99 500.0 ms > 100ms"}
	if err := (&rundir.Dir{Path: b2}).WriteResults(res); err != nil {
		t.Fatal(err)
	}
	_, inv, err := CompareDirs([]DirVariant{{Name: "m2", Dirs: []string{a1, a2}}, {Name: "m6", Dirs: []string{b1, b2}}}, cfg, out, false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Summary[1].Runs != 1 || !strings.Contains(strings.Join(inv.Warnings, "\n"), "marked invalid") {
		t.Errorf("invalid run: summary %+v, warnings %q; want it left out and said", inv.Summary[1], inv.Warnings)
	}
}

// A gossip run and a CometBFT run are not compared.
func TestCompareDirsRefusesMixedKinds(t *testing.T) {
	root := t.TempDir()
	g := filepath.Join(root, "g")
	gossipRun(t, g, ba2, 1)
	c := filepath.Join(root, "c")
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (&rundir.Dir{Path: c}).WriteResults(&rundir.Results{Valid: true}); err != nil {
		t.Fatal(err)
	}
	_, _, err := CompareDirs([]DirVariant{{Name: "g", Dirs: []string{g}}, {Name: "c", Dirs: []string{c}}}, DefaultCompare(), filepath.Join(root, "out"), true, time.Unix(0, 0))
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "one node kind") {
		t.Errorf("mixed kinds: %v, want a refusal", err)
	}
}

func TestGossipVariantKeys(t *testing.T) {
	nm, err := figures.For(spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"network.m", true}, {"network.delay", true}, {"network.topology", true}, {"gossipsub.d", true},
		{"publish.rate", true}, {"network.subnet", false}, {"node.gossip.count", false}, {"publish.size", false}, {"seed", false},
	} {
		if got := nm.VariantKey(c.path); got != c.want {
			t.Errorf("VariantKey(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

// TestChainVariantKeys: two CometBFT runs compare across releases, node
// config, app, transport and genesis, not across testbeds.
func TestChainVariantKeys(t *testing.T) {
	nm, err := figures.For(manifest.KindCometBFT)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"node.validator.release", true}, {"node.validator.config.log_level", true}, {"node.full.app", true},
		{"node.validator.transport", true}, {"genesis.consensus_params", true},
		{"node.validator.count", false}, {"network.subnet", false}, {"network.zones", false}, {"load.rate", false},
	} {
		if got := nm.VariantKey(c.path); got != c.want {
			t.Errorf("VariantKey(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
