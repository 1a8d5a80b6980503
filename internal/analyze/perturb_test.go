package analyze

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestComputeFaults(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ns := func(s float64) int64 { return at(s).UnixNano() }
	step := func(s float64, do string, undo bool) rundir.Event {
		d, _ := json.Marshal(StepEvent{Step: manifest.Step{Action: "kill", Nodes: []string{"v2"}, Entry: 0, Undo: undo}, Do: do})
		return rundir.Event{Time: at(s), Kind: rundir.EventPerturbStep, Node: "v2", Detail: string(d)}
	}
	rc, _ := json.Marshal(rundir.RotateCycle{Cycle: 1, Node: "e0", StartNs: ns(2), CaughtUpNs: ns(6), Height: 20, Tip: 21, StopNs: ns(9)})
	in := &FaultInput{
		Events: []rundir.Event{
			{Time: at(0), Kind: rundir.EventLoadStart},
			step(4, "kill", false),
			step(10, "start", true),
			{Time: at(2), Kind: rundir.EventRotateCycle, Node: "e0", Detail: string(rc)},
			{Time: at(20), Kind: rundir.EventLoadDone},
		},
		// One block a second before the kill, then a 3 s gap, then one a second.
		Blocks: []rundir.Block{
			{Height: 1, TimeNs: ns(0.5)}, {Height: 2, TimeNs: ns(1.5)}, {Height: 3, TimeNs: ns(2.5)}, {Height: 4, TimeNs: ns(3.5)},
			{Height: 5, TimeNs: ns(7)}, {Height: 6, TimeNs: ns(8)}, {Height: 7, TimeNs: ns(9)}, {Height: 8, TimeNs: ns(11)},
		},
		Heights: []rundir.HeightSample{
			{TimeNs: ns(10.5), Node: "v0", Height: 7}, {TimeNs: ns(10.5), Node: "v2", Height: 3, CatchingUp: true},
			{TimeNs: ns(11), Node: "v0", Height: 8}, {TimeNs: ns(11), Node: "v2", Height: 6},
			{TimeNs: ns(12), Node: "v0", Height: 8}, {TimeNs: ns(12), Node: "v2", Height: 8},
		},
		Sent: []rundir.Sent{{Hash: "AA"}, {Hash: "BB"}},
		// AA committed twice: the second commit (block 6, at 8 s) falls in the cycle.
		BlockTxs: []rundir.BlockTx{{Height: 2, Hash: "AA"}, {Height: 6, Hash: "aa"}, {Height: 3, Hash: "BB"}, {Height: 4, Hash: "CC"}, {Height: 5, Hash: "CC"}},
		Txs: []rundir.Tx{
			{Node: "v2", SentNs: ns(5), State: rundir.StateSendError}, {Node: "v2", SentNs: ns(6), State: rundir.StateLost},
			{Node: "v1", SentNs: ns(5), State: rundir.StateCommitted}, {Node: "v2", SentNs: ns(12), State: rundir.StateCommitted},
		},
	}
	fr := ComputeFaults(in)
	if fr == nil || len(fr.Perturbations) != 1 || len(fr.Cycles) != 1 {
		t.Fatalf("got %+v", fr)
	}
	p := fr.Perturbations[0]
	check := func(name string, got, want float64) {
		t.Helper()
		if d := got - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("block rate", p.BlockRate, 1)    // 4 blocks in 4 s
	check("blocks", float64(p.Blocks), 3)  // at 7, 8, 9
	check("missed", float64(p.Missed), 3)  // 6 expected
	check("first block", p.FirstBlockS, 3) // 4 → 7
	check("longest gap", p.LongestGapS, 3) // 4 → 7 (9 → 10 is 1)
	check("back at tip", p.BackAtTip["v2"], 2)
	if !p.Undone || p.Txs[rundir.StateSendError] != 1 || p.Txs[rundir.StateLost] != 1 || len(p.Txs) != 2 {
		t.Errorf("undone %v txs %v", p.Undone, p.Txs)
	}
	c := fr.Cycles[0]
	check("catch-up", c.CatchUpS, 4)
	check("blocks/s", c.BlocksPerS, 5)
	if c.Duplicates != 1 {
		t.Errorf("duplicates %d, want 1 (CC is not a run tx)", c.Duplicates)
	}
	if ComputeFaults(&FaultInput{Events: []rundir.Event{{Kind: rundir.EventLoadStart}}}) != nil {
		t.Error("a run without faults has fault results")
	}

	// Never undone, no block after, never back: the halt.
	in.Events = []rundir.Event{{Time: at(0), Kind: rundir.EventLoadStart}, step(4, "kill", false), {Time: at(6), Kind: rundir.EventChainHalted, Detail: "no block"}, {Time: at(20), Kind: rundir.EventLoadDone}}
	in.Blocks = in.Blocks[:4]
	fr = ComputeFaults(in)
	p = fr.Perturbations[0]
	if fr.Halted != "no block" || p.Undone || p.Blocks != 0 || p.FirstBlockS != -1 || p.Missed != 16 || p.BackAtTip["v2"] != -1 {
		t.Errorf("halt: %+v %+v", fr.Halted, p)
	}
	check("longest gap (halt)", p.LongestGapS, 16)

	// A pause without For ends with a later entry's resume of its node; the
	// resume entry is not an outage of its own.
	ev := func(s float64, action, do string, entry int, nodes ...string) rundir.Event {
		d, _ := json.Marshal(StepEvent{Step: manifest.Step{Action: action, Nodes: nodes, Entry: entry}, Do: do})
		return rundir.Event{Time: at(s), Kind: rundir.EventPerturbStep, Detail: string(d)}
	}
	in.Events = []rundir.Event{{Time: at(0), Kind: rundir.EventLoadStart},
		ev(4, "pause", "pause", 0, "v2"), ev(5, "partition", "partition", 1, "v0", "v1"),
		ev(6, "resume", "resume", 2, "v1"), ev(7, "resume", "resume", 3, "v2"), ev(8, "heal", "heal", 4),
		{Time: at(20), Kind: rundir.EventLoadDone}}
	fr = ComputeFaults(in)
	if len(fr.Perturbations) != 2 {
		t.Fatalf("perturbations %+v", fr.Perturbations)
	}
	if p := fr.Perturbations[0]; !p.Undone || p.EndNs != ns(7) {
		t.Errorf("pause ends at %v, want the resume of v2 at 7 s", time.Duration(p.EndNs-ns(0)))
	}
	if p := fr.Perturbations[1]; !p.Undone || p.EndNs != ns(8) {
		t.Errorf("partition ends at %v, want the heal at 8 s", time.Duration(p.EndNs-ns(0)))
	}
}

// TestComputeFaultsNoChain: a gossip run's faults (publish window, no
// heights, blocks or txs) are outages without chain figures: no_chain, no
// back-at-tip, the window from publish_start to publish_done, and a
// summary that speaks of no blocks.
func TestComputeFaultsNoChain(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	step := func(s float64, action, do string) rundir.Event {
		d, _ := json.Marshal(StepEvent{Step: manifest.Step{Action: action, Nodes: []string{"gossip4"}}, Do: do})
		return rundir.Event{Time: at(s), Kind: rundir.EventPerturbStep, Node: "gossip4", Detail: string(d)}
	}
	fr := ComputeFaults(&FaultInput{Events: []rundir.Event{
		{Time: at(0), Kind: rundir.EventPublishStart},
		step(2, manifest.ActKill, "kill"),
		{Time: at(8), Kind: rundir.EventPublishDone},
	}})
	if fr == nil || !fr.NoChain || len(fr.Perturbations) != 1 {
		t.Fatalf("got %+v, want one perturbation, no chain", fr)
	}
	p := fr.Perturbations[0]
	if p.Undone || p.EndNs != at(8).UnixNano() || p.BackAtTip != nil {
		t.Errorf("kill never undone: %+v, want it to end with publish_done and no back_at_tip", p)
	}
	want := "perturb[0] kill gossip4: outage 6.0 s (not undone)\n"
	if got := FaultSummary(fr); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
