package analysis

import (
	"slices"
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestReach(t *testing.T) {
	p := &plan.Testnet{Nodes: []*plan.Node{{Name: "v0", Role: "validator"}, {Name: "v1", Role: "validator"}, {Name: "f0", Role: "full"}, {Name: "s0", Role: "seed"}}}
	ms := int64(1e6)
	const t0 = int64(1e12)
	sent := []rundir.Sent{{Node: "v0", SentAt: t0 + 5*ms}, {Node: "v0", SentAt: t0}}
	// Polls every 100 ms from t0-100ms: v0 holds a tx from t0+100 ms, v1
	// from t0+300 ms, f0 from t0+200 ms; v1 held one before the load (not
	// the run's) and the seed is never counted.
	var mem []rundir.MempoolSample
	holds := map[string]int64{"v0": 100, "v1": 300, "f0": 200, "s0": 0}
	for k := int64(-1); k <= 5; k++ {
		at := t0 + k*100*ms
		for n, from := range holds {
			size := 0
			if k*100 >= from || (n == "v1" && k < 0) {
				size = 3
			}
			mem = append(mem, rundir.MempoolSample{TimeNs: at, Node: n, Size: size})
		}
	}
	r := Reach(p, sent, mem)
	if r == nil {
		t.Fatal("no reach for a single-node load")
	}
	want := map[string]float64{"v0": 100, "v1": 300, "f0": 200}
	if r.Target != "v0" || r.AllMs != 300 || r.PollMs != 100 || len(r.Nodes) != 3 {
		t.Errorf("reach %+v, want target v0, all 300 ms, poll 100 ms, 3 nodes", r)
	}
	for _, n := range r.Nodes {
		if n.ReachMs != want[n.Node] {
			t.Errorf("%s: %g ms, want %g", n.Node, n.ReachMs, want[n.Node])
		}
	}
	// A node whose mempool never held one: never, and so is every node's.
	holds["f0"] = 1e6
	mem = mem[:0]
	for k := int64(0); k <= 3; k++ {
		for n, from := range holds {
			size := 0
			if k*100 >= from {
				size = 1
			}
			mem = append(mem, rundir.MempoolSample{TimeNs: t0 + k*100*ms, Node: n, Size: size})
		}
	}
	if r := Reach(p, sent, mem); r == nil || r.AllMs != -1 {
		t.Errorf("a node never reached: %+v", r)
	}
	// A node that joined during the load (first polled after the first
	// send: a rotating node) is left out and named, not counted as slow.
	late := append([]rundir.MempoolSample(nil), mem...)
	late = append(late, rundir.MempoolSample{TimeNs: t0 + 5*ms, Node: "eph0", Size: 0},
		rundir.MempoolSample{TimeNs: t0 + 900*ms, Node: "eph0", Size: 4})
	holds["f0"] = 200
	for i := range late {
		if late[i].Node == "f0" && late[i].TimeNs >= t0+200*ms {
			late[i].Size = 1
		}
	}
	if r := Reach(p, sent, late); r == nil || r.AllMs != 300 || len(r.Nodes) != 3 || !slices.Equal(r.Late, []string{"eph0"}) {
		t.Errorf("a node joined during the load: %+v, want all 300 ms over v0, v1, f0 and eph0 late", r)
	}
	// One polled node has nothing to propagate to.
	var one []rundir.MempoolSample
	for _, m := range mem {
		if m.Node == "v0" {
			one = append(one, m)
		}
	}
	if r := Reach(p, sent, one); r != nil {
		t.Errorf("one polled node: %+v", r)
	}
	// A load to two nodes has no single-node reach.
	if r := Reach(p, append(sent, rundir.Sent{Node: "v1", SentAt: t0}), mem); r != nil {
		t.Errorf("two targets: %+v", r)
	}
}
