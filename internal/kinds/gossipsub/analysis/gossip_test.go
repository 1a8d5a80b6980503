package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis/gossiptest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/topology"
)

const t0 = int64(1_700_000_000_000_000_000)

func graph(t *testing.T, s topology.Spec, n int) [][]int {
	t.Helper()
	e, err := topology.Edges(s, n, 42)
	if err != nil {
		t.Fatal(err)
	}
	return topology.Adjacency(n, e)
}

// analyse writes a synthetic run and runs the whole analysis on it.
func analyse(t *testing.T, net gossiptest.Net, msgs []gossiptest.Msg) (*rundir.Results, []rundir.Delivery, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := gossiptest.Write(dir, net, msgs); err != nil {
		t.Fatal(err)
	}
	d := &rundir.Dir{Path: dir}
	res, err := Run(d)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := rundir.DeliveriesCSV.ReadFile(rundir.DeliveriesCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	return res, rows, dir
}

// A line of N hosts, one-way delay L, published from one end: the last
// delivery is N-1 hops and (N-1)·L away.
func TestLine(t *testing.T) {
	const n, L = 8, 100 * time.Millisecond
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: graph(t, topology.Spec{Kind: topology.Line}, n), Delay: L}
	msgs := []gossiptest.Msg{{ID: "a", Publisher: 0, At: t0}, {ID: "b", Publisher: 0, At: t0 + 1e9}}
	res, rows, _ := analyse(t, net, msgs)
	g := res.Gossip
	if g.LastDeliveryHop.Max != n-1 || g.LastDeliveryHop.Min != n-1 || g.MaxHop.Max != n-1 {
		t.Errorf("last-delivery hop %+v, max hop %+v: want %d", g.LastDeliveryHop, g.MaxHop, n-1)
	}
	if want := float64((n-1)*L) / 1e6; g.LastDelivery.Max != want || g.LastDelivery.Min != want {
		t.Errorf("last delivery %+v ms, want %v", g.LastDelivery, want)
	}
	if g.MDR != 1 || g.Delivered != 2*(n-1) || g.Missing != nil {
		t.Errorf("MDR %v delivered %d missing %v, want 1, %d, none", g.MDR, g.Delivered, g.Missing, 2*(n-1))
	}
	if g.Duplicates.Max != 0 {
		t.Errorf("a line has no duplicates, got %+v", g.Duplicates)
	}
	for _, r := range rows {
		var i int
		if _, err := fmtSscan(r.Node, &i); err != nil {
			t.Fatal(err)
		}
		if r.Hop != i || r.DeliverNs-r.PublishNs != int64(i)*int64(L) {
			t.Errorf("%s at %s: hop %d after %v, want %d after %v", r.MsgID, r.Node, r.Hop, time.Duration(r.DeliverNs-r.PublishNs), i, time.Duration(i)*L)
		}
	}
	if !res.Valid {
		t.Errorf("invalid: %v", res.Invalid)
	}
}

// A complete graph delivers everything in one hop; the report's bound is 2.
func TestComplete(t *testing.T) {
	const n = 10
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: graph(t, topology.Spec{Kind: topology.Full}, n), Delay: 10 * time.Millisecond}
	res, _, _ := analyse(t, net, gossiptest.Schedule(n, 50, 10, t0, 1))
	g := res.Gossip
	if g.MaxHop.Max > 2 || g.LastDeliveryHop.Max > 2 {
		t.Errorf("complete graph: max hop %v, last-delivery hop %v, want <= 2", g.MaxHop.Max, g.LastDeliveryHop.Max)
	}
	if g.MDR != 1 || g.Messages != 50 || g.Expected != 50*(n-1) {
		t.Errorf("MDR %v messages %d expected %d", g.MDR, g.Messages, g.Expected)
	}
	// Flooding a complete graph: every node gets one copy from each of the
	// other n-1 nodes... minus the one it came from: n-2 duplicates.
	if g.Duplicates.Min != n-2 || g.Duplicates.Max != n-2 {
		t.Errorf("duplicates %+v, want %d each", g.Duplicates, n-2)
	}
}

// A host killed mid-run: its missing deliveries are attributed to it, the
// others still get everything (a ring routes around it).
func TestKilledHost(t *testing.T) {
	const n = 6
	kill := t0 + 2_500_000_000 // after message 2 (published at 2 s) spread
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: graph(t, topology.Spec{Kind: topology.Ring}, n),
		Delay: 5 * time.Millisecond, Killed: map[int]int64{3: kill}}
	var msgs []gossiptest.Msg
	for i := 0; i < 5; i++ {
		msgs = append(msgs, gossiptest.Msg{ID: string(rune('a' + i)), Publisher: 0, At: t0 + int64(i)*1e9})
	}
	res, rows, _ := analyse(t, net, msgs)
	g := res.Gossip
	if g.Missing[ReasonHostExited] != 2 || len(g.Missing) != 1 {
		t.Errorf("missing %v, want 2 host_exited", g.Missing)
	}
	if want := 1 - 2.0/float64(5*(n-1)); g.MDR != round6(want) {
		t.Errorf("MDR %v, want %v", g.MDR, round6(want))
	}
	for _, nr := range g.HostNodes {
		switch {
		case nr.Name == "host3" && (nr.Delivered != 3 || !nr.Exited || nr.Missing[ReasonHostExited] != 2):
			t.Errorf("host3: %+v", nr)
		case nr.Name != "host3" && nr.Name != "host0" && nr.MDR != 1:
			t.Errorf("%s MDR %v, want 1", nr.Name, nr.MDR)
		}
	}
	missing := 0
	for _, r := range rows {
		if r.State == rundir.DeliveryMissing {
			missing++
			if r.Node != "host3" || r.Reason != ReasonHostExited || (r.MsgID != "d" && r.MsgID != "e") {
				t.Errorf("missing row %+v", r)
			}
		}
	}
	if missing != 2 {
		t.Errorf("%d missing rows, want 2", missing)
	}
	if !res.Nodes[3].Exited {
		t.Errorf("results nodes: host3 not marked exited: %+v", res.Nodes[3])
	}
}

// Dropped RPCs and full subscriber queues are told apart from never reached.
func TestAttribution(t *testing.T) {
	const n = 5
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: graph(t, topology.Spec{Kind: topology.Line}, n), Delay: time.Millisecond,
		DropTo: map[int]bool{2: true}, Undeliverable: map[int]bool{1: true}}
	res, _, _ := analyse(t, net, []gossiptest.Msg{{ID: "x", Publisher: 0, At: t0}})
	want := map[string]int{ReasonQueueFull: 1, ReasonDroppedRPC: 1, ReasonNeverReached: 2}
	got := res.Gossip.Missing
	if len(got) != len(want) {
		t.Fatalf("missing %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("missing %v, want %v", got, want)
		}
	}
	if res.Gossip.DroppedRPC != 1 || res.Gossip.Undeliverable != 1 {
		t.Errorf("event counts %d dropped, %d undeliverable", res.Gossip.DroppedRPC, res.Gossip.Undeliverable)
	}
}

// The last delivery's depth differs from the tree's depth when a deep node
// is reached early: hand-made trace, publisher p, p->a (1 ms), a->b (2 ms),
// p->c (10 ms). Last delivery is c at depth 1; the longest chain is 2.
func TestLastDeliveryVersusMaxDepth(t *testing.T) {
	pub := []rundir.Published{{MsgID: "m", Publisher: "p", Intended: 0, SentAt: 0, Result: rundir.ResultOK}}
	ev := []rundir.GossipEvent{
		{TimeNs: 0, Node: "p", Kind: rundir.GossipPublish, MsgID: "m"},
		{TimeNs: 1e6, Node: "a", Kind: rundir.GossipDeliver, MsgID: "m", Peer: "p"},
		{TimeNs: 2e6, Node: "b", Kind: rundir.GossipDeliver, MsgID: "m", Peer: "a"},
		{TimeNs: 10e6, Node: "c", Kind: rundir.GossipDeliver, MsgID: "m", Peer: "p"},
		{TimeNs: 11e6, Node: "c", Kind: rundir.GossipDuplicate, MsgID: "m", Peer: "b"},
	}
	in := &Input{Nodes: []string{"p", "a", "b", "c"}, Published: pub, Traced: []string{"p", "a", "b", "c"},
		Traces: func(y func(*rundir.GossipEvent) error) error {
			for i := range ev {
				if err := y(&ev[i]); err != nil {
					return err
				}
			}
			return nil
		}}
	g, rows, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if g.LastDeliveryHop.Max != 1 || g.MaxHop.Max != 2 || g.LastDelivery.Max != 10 {
		t.Errorf("last-delivery hop %v, max hop %v, last delivery %v ms: want 1, 2, 10", g.LastDeliveryHop.Max, g.MaxHop.Max, g.LastDelivery.Max)
	}
	if len(rows) != 3 || rows[2].Duplicates != 1 || rows[1].From != "a" || rows[1].Hop != 2 {
		t.Errorf("rows %+v", rows)
	}
}

func TestBadInput(t *testing.T) {
	in := &Input{Nodes: []string{"a"}, Published: []rundir.Published{{MsgID: "m", Publisher: "zz", Result: rundir.ResultOK}},
		Traces: func(func(*rundir.GossipEvent) error) error { return nil }}
	if _, _, err := Compute(in); err == nil || err.Error() != `gossip analysis: published.csv: message m publisher "zz" is not a plan node` {
		t.Errorf("err = %v", err)
	}
}

// TestGolden pins results.json and deliveries.csv of a small Barabási–Albert
// run with a killed host and a publisher that fell behind.
func TestGolden(t *testing.T) {
	const n = 12
	msgs := gossiptest.Schedule(n, 40, 20, t0, 7)
	for i := 30; i < 40; i++ {
		msgs[i].Lag = 300 * time.Millisecond
	}
	net := gossiptest.Net{Nodes: gossiptest.Names(n), Adj: graph(t, topology.Spec{Kind: topology.BarabasiAlbert, M: 2}, n),
		Delay: 20 * time.Millisecond, Fanout: 3, Seed: 5, ProcSamples: 4, Killed: map[int]int64{7: t0 + 1_000_000_000}}
	res, _, dir := analyse(t, net, msgs)
	res.RunID = "" // the temp dir's name
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	csvData, err := os.ReadFile(filepath.Join(dir, "deliveries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"golden.results.json": got, "golden.deliveries.csv": csvData} {
		file := filepath.Join("testdata", name)
		testenv.Golden(t, file, data)
	}
	if res.Valid {
		t.Errorf("a publisher 300 ms late on a quarter of its messages must make the run invalid")
	}
}

func TestProcStats(t *testing.T) {
	s := procStats([]rundir.Proc{
		{TimeNs: 2e9, Node: "a", PID: 1, RSSBytes: 30 << 20, CPUSeconds: 0.6},
		{TimeNs: 0, Node: "a", PID: 1, RSSBytes: 10 << 20, CPUSeconds: 0},
		{TimeNs: 1e9, Node: "a", PID: 1, RSSBytes: 20 << 20, CPUSeconds: 0.5},
		// A restart: the new pid's counter starts over and is not a negative interval.
		{TimeNs: 3e9, Node: "a", PID: 2, RSSBytes: 40 << 20, CPUSeconds: 0.1},
	})["a"]
	want := rundir.ProcStats{Samples: 4, CPUMaxPct: 50, CPUAvgPct: 30, RSSMaxMB: 40, RSSAvgMB: 25}
	if *s != want {
		t.Errorf("procStats = %+v, want %+v", *s, want)
	}
}

// A host that exits and comes back is blamed only for the messages
// published while it was down (or just before it died), not for later ones;
// the same when a [[perturb]] step killed or stopped it (node_kill,
// node_stop: the runner reports no node_exited for an exit it caused).
func TestExitAndRestart(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	pub := func(id string, at time.Duration) rundir.Published {
		ns := base.Add(at).UnixNano()
		return rundir.Published{MsgID: id, Publisher: "p", Intended: ns, SentAt: ns, Ack: ns, Result: rundir.ResultOK}
	}
	for _, down := range []string{"node_exited", "node_kill", "node_stop"} {
		in := &Input{Nodes: []string{"p", "v"}, Traced: []string{"p", "v"},
			Published: []rundir.Published{pub("before", 0), pub("down", 20*time.Second), pub("after", 60*time.Second)},
			Events: []rundir.Event{
				{Time: base.Add(5 * time.Second), Kind: down, Node: "v"},
				{Time: base.Add(40 * time.Second), Kind: rundir.EventNodeStarted, Node: "v"},
			},
			Traces: func(func(*rundir.GossipEvent) error) error { return nil }}
		g, rows, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		// results.json's node record says the same as the blame: down 35 s.
		res := Results(nil, in, g)
		if v := res.Nodes[1]; !v.Exited || v.DownSec != 35 || len(v.Outages) != 1 || v.Outages[0].Cause != CauseDown ||
			v.Outages[0].Event != down || !v.Outages[0].Undone || res.Nodes[0].Exited || res.Nodes[0].Outages != nil {
			t.Errorf("%s: results nodes %+v", down, res.Nodes)
		}
		if !g.HostNodes[1].Exited || g.HostNodes[0].Exited {
			t.Errorf("%s: gossip host nodes %+v", down, g.HostNodes)
		}
		want := map[string]string{"before": ReasonHostExited, "down": ReasonHostExited, "after": ReasonNeverReached}
		if len(rows) != len(want) {
			t.Errorf("%s: %d rows, want %d", down, len(rows), len(want))
		}
		for _, r := range rows {
			if r.Reason != want[r.MsgID] {
				t.Errorf("%s: %s: reason %q, want %q", down, r.MsgID, r.Reason, want[r.MsgID])
			}
		}
	}
}

// A paused host's misses within the pause (or ExitWindow before it) are
// host_paused, the others stay never_reached; it never exited.
func TestPausedHost(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	pub := func(id string, at time.Duration) rundir.Published {
		ns := base.Add(at).UnixNano()
		return rundir.Published{MsgID: id, Publisher: "p", Intended: ns, SentAt: ns, Ack: ns, Result: rundir.ResultOK}
	}
	in := &Input{Nodes: []string{"p", "v"}, Traced: []string{"p", "v"},
		Published: []rundir.Published{pub("early", 0), pub("before", 25*time.Second), pub("paused", 35*time.Second), pub("after", 60*time.Second)},
		Events: []rundir.Event{
			{Time: base.Add(30 * time.Second), Kind: "node_pause", Node: "v"},
			{Time: base.Add(40 * time.Second), Kind: "node_resume", Node: "v"},
		},
		Traces: func(func(*rundir.GossipEvent) error) error { return nil }}
	g, rows, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"early": ReasonNeverReached, "before": ReasonHostPaused, "paused": ReasonHostPaused, "after": ReasonNeverReached}
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if r.Reason != want[r.MsgID] {
			t.Errorf("%s: reason %q, want %q", r.MsgID, r.Reason, want[r.MsgID])
		}
	}
	if g.Missing[ReasonHostPaused] != 2 || g.Missing[ReasonNeverReached] != 2 {
		t.Errorf("missing %v", g.Missing)
	}
	res := Results(nil, in, g)
	v := res.Nodes[1]
	if v.Exited || v.DownSec != 0 || len(v.Outages) != 1 || v.Outages[0].Cause != CausePaused || v.Outages[0].Sec != 10 || !v.Outages[0].Undone {
		t.Errorf("results node v %+v", v)
	}
}

// A cut blames the hosts on the other side of it from the publisher:
// host_cut_off; a host on the publisher's side stays never_reached.
func TestCutOffHost(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) int64 { return base.Add(d).UnixNano() }
	pub := func(id, from string, d time.Duration) rundir.Published {
		return rundir.Published{MsgID: id, Publisher: from, Intended: at(d), SentAt: at(d), Ack: at(d), Result: rundir.ResultOK}
	}
	for _, tc := range []struct {
		name   string
		events []rundir.Event
		want   map[string]string // receiver -> reason of message "m" (published by p in the cut)
	}{
		{"disconnect receiver", []rundir.Event{{Kind: "node_disconnect", Node: "v"}},
			map[string]string{"v": ReasonHostCutOff, "w": ReasonNeverReached}},
		{"disconnect publisher", []rundir.Event{{Kind: "node_disconnect", Node: "p"}},
			map[string]string{"v": ReasonHostCutOff, "w": ReasonHostCutOff}},
		{"partition", []rundir.Event{{Kind: "node_partition", Node: "p,w"}},
			map[string]string{"v": ReasonHostCutOff, "w": ReasonNeverReached}},
	} {
		evs := append(tc.events, rundir.Event{Kind: "node_heal"})
		evs[0].Time, evs[1].Time = base.Add(30*time.Second), base.Add(40*time.Second)
		in := &Input{Nodes: []string{"p", "v", "w"}, Traced: []string{"p", "v", "w"},
			Published: []rundir.Published{pub("m", "p", 35*time.Second), pub("after", "p", 60*time.Second)},
			Events:    evs,
			Traces:    func(func(*rundir.GossipEvent) error) error { return nil }}
		g, rows, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 {
			t.Errorf("%s: %d rows, want 4", tc.name, len(rows))
		}
		for _, r := range rows {
			want := tc.want[r.Node]
			if r.MsgID == "after" {
				want = ReasonNeverReached // healed by then
			}
			if r.Reason != want {
				t.Errorf("%s: %s to %s: reason %q, want %q", tc.name, r.MsgID, r.Node, r.Reason, want)
			}
		}
		for _, n := range Results(nil, in, g).Nodes {
			if n.Exited {
				t.Errorf("%s: %s exited", tc.name, n.Name)
			}
		}
	}
}

func TestMachineBusy(t *testing.T) {
	pub := []rundir.Published{{Intended: 10e9}, {Intended: 20e9}}
	host := []rundir.Host{
		{TimeNs: 5e9, CPUBusySeconds: 0, CPUTotalSeconds: 0}, // before the schedule: ignored
		{TimeNs: 10e9, CPUBusySeconds: 10, CPUTotalSeconds: 20},
		{TimeNs: 20e9, CPUBusySeconds: 29.6, CPUTotalSeconds: 40},
	}
	if got := machineBusy(host, pub); got != 98 {
		t.Errorf("machineBusy = %v, want 98", got)
	}
	why := Validity(&rundir.GossipResults{MachineBusyPct: 98, Publish: rundir.PublishStats{Scheduled: 2}})
	if len(why) != 1 || !strings.Contains(why[0], "machine CPU 98.0% busy") {
		t.Errorf("Validity = %v", why)
	}
}
