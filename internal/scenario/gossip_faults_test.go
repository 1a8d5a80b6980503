package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/analysis"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

const subnetGossipFaults = "10.213.187.0/24"

// TestGossipPerturbKillRestart: a gossip run runs its [[perturb]] schedule
// during the publish window, through the testnet. An 8-host line publishes
// 10 msg/s from gossip0 for 8 s; gossip4 (the middle) is killed 2 s in and
// restarted 3 s later. The steps and the testnet's node_kill / node_restart
// are events at those times, faults.json records the outage, gossip4's
// trace keeps its rows from before the kill (the restarted host appends),
// and the analysis blames the outage: gossip4's missing deliveries on its
// being down, those of the hosts behind it as never reached, the hosts
// before it missing nothing, and everyone delivering again after the
// restart.
func TestGossipPerturbKillRestart(t *testing.T) {
	needRoot(t)
	exe := benchnetExe(t)
	const n, count, rate = 8, 80, 10
	const killAt, downFor = 2 * time.Second, 3 * time.Second
	m := gossipNet(t, subnetGossipFaults, "line", "", n, fmt.Sprintf(
		"rate = %d\ncount = %d\nsource = \"gossip0\"\nwarmup = \"1s\"\ncooldown = \"2s\"\n"+
			"[[perturb]]\nat = %q\nnode = \"gossip4\"\naction = \"kill\"\nfor = %q\n", rate, count, killAt.String(), downFor.String()))
	if len(m.Perturb) != 1 || m.HaltLimit.Duration != 0 {
		t.Fatalf("manifest: perturb %v, halt_limit %s: want one entry and no halt limit", m.Perturb, m.HaltLimit.Duration)
	}
	var log strings.Builder
	out, err := Gossip(context.Background(), m, Options{Up: testnet.Options{Output: t.TempDir(), HostExecutable: exe}, Log: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	t.Logf("run log:\n%s", log.String())

	// The schedule ran at its times into the publish window.
	events := readEvents(t, out.RunDir)
	p0 := eventTime(t, events, "publish_start")
	var steps []analyze.StepEvent
	var kill, restart, started time.Time
	for _, e := range events {
		switch {
		case e.Kind == rundir.EventPerturbStep:
			var se analyze.StepEvent
			if err := json.Unmarshal([]byte(e.Detail), &se); err != nil {
				t.Fatalf("perturb_step detail %q: %v", e.Detail, err)
			}
			steps = append(steps, se)
		case e.Kind == "node_kill" && e.Node == "gossip4":
			kill = e.Time
		case e.Kind == "node_restart" && e.Node == "gossip4":
			restart = e.Time
		case e.Kind == rundir.EventNodeStarted && e.Node == "gossip4" && !kill.IsZero():
			started = e.Time
		}
	}
	if len(steps) != 2 || steps[0].Do != "kill" || steps[1].Do != "start" || !steps[1].Undo ||
		strings.Join(steps[0].Nodes, ",") != "gossip4" || strings.Join(steps[1].Nodes, ",") != "gossip4" {
		t.Fatalf("perturb_step events %+v: want kill then start of gossip4", steps)
	}
	if kill.IsZero() || restart.IsZero() || started.IsZero() {
		t.Fatalf("events: node_kill %v, node_started after it %v, node_restart %v of gossip4: want all three", kill, started, restart)
	}
	// The faults' clock starts with the first publication, 100 ms after
	// publish_start.
	if d := kill.Sub(p0); d < killAt || d > killAt+600*time.Millisecond {
		t.Errorf("node_kill %s after publish_start, want %s (+100 ms, some slack)", d, killAt)
	}
	if d := restart.Sub(p0); d < killAt+downFor || d > killAt+downFor+2*time.Second {
		t.Errorf("node_restart %s after publish_start, want %s and the host's start", d, killAt+downFor)
	}

	// faults.json records the outage; no "back at tip" without a chain.
	d, err := rundir.Open(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, err := d.ReadFaults()
	if err != nil {
		t.Fatalf("faults.json: %v", err)
	}
	if len(fr.Perturbations) != 1 {
		t.Fatalf("faults.json: %+v, want one perturbation", fr)
	}
	p := fr.Perturbations[0]
	// (The outage runs from the kill's perturb_step event to the start's,
	// each stamped when its timer fired.)
	outage := time.Duration(p.EndNs - p.StartNs)
	if p.Action != manifest.ActKill || strings.Join(p.Nodes, ",") != "gossip4" || !p.Undone ||
		outage < downFor-50*time.Millisecond || outage > downFor+time.Second || len(p.BackAtTip) != 0 || fr.Halted != "" || !fr.NoChain {
		t.Errorf("faults.json %+v (outage %s): want gossip4's kill, undone after %s, no chain, no back_at_tip", fr, outage, downFor)
	}
	// The report lists it.
	md, err := os.ReadFile(filepath.Join(out.RunDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Faults") || !strings.Contains(string(md), "| 0 | kill | gossip4 |") {
		t.Errorf("report.md has no Faults section with gossip4's kill:\n%s", md)
	}

	// The restarted host appended to its trace: deliveries from both lives.
	rows, _, err := rundir.GossipTraceCSV.ReadFile(filepath.Join(out.RunDir, rundir.GossipTraceDir, "gossip4.csv"))
	if err != nil {
		t.Fatalf("gossip4's trace: %v", err)
	}
	var before, after int
	for _, r := range rows {
		if r.Kind != rundir.GossipDeliver {
			continue
		}
		switch {
		case r.TimeNs < kill.UnixNano():
			before++
		case r.TimeNs > started.UnixNano():
			after++
		default:
			t.Errorf("gossip4 delivered %s at %s, while it was down", r.MsgID, time.Unix(0, r.TimeNs).Format(time.StampMicro))
		}
	}
	if before < 10 || after < 10 {
		t.Errorf("gossip4's trace: %d deliveries before the kill, %d after the restart: want both lives (>= 10 each)", before, after)
	}

	// The analysis blames the outage.
	res, err := analysis.Run(d)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Gossip
	node := map[string]rundir.GossipNode{}
	for _, nr := range g.HostNodes {
		node[nr.Name] = nr
	}
	for _, name := range []string{"gossip1", "gossip2", "gossip3"} {
		if nr := node[name]; nr.Delivered != count {
			t.Errorf("%s, before the killed host: %+v, want all %d delivered", name, nr, count)
		}
	}
	// ~30 messages are published while gossip4 is down.
	lostMin, lostMax := int(rate*downFor.Seconds())-8, int(rate*downFor.Seconds())+12
	k := node["gossip4"]
	if !k.Exited || k.Missing[analysis.ReasonHostExited] < lostMin || k.Missing[analysis.ReasonHostExited] > lostMax || k.Delivered != before+after {
		t.Errorf("gossip4 (killed, restarted): %+v: want exited, %d to %d missing as %s, %d+%d delivered", k, lostMin, lostMax, analysis.ReasonHostExited, before, after)
	}
	for _, name := range []string{"gossip5", "gossip6", "gossip7"} {
		nr := node[name]
		lost := nr.Missing[analysis.ReasonNeverReached]
		if nr.Exited || lost < lostMin || lost > lostMax || nr.Missing[analysis.ReasonHostExited] != 0 || nr.Delivered < count-lostMax {
			t.Errorf("%s (behind the killed host): %+v: want %d to %d %s, the rest delivered", name, nr, lostMin, lostMax, analysis.ReasonNeverReached)
		}
	}
	if g.MDR >= 1 || g.MDR < 0.5 {
		t.Errorf("MDR %.4f: want the outage's losses and no more", g.MDR)
	}
	// results.json's node records say what the blame says: gossip4 was
	// down (killed until its restart), nobody else.
	for _, nr := range res.Nodes {
		if nr.Name != "gossip4" {
			if nr.Exited || len(nr.Outages) != 0 {
				t.Errorf("results.json %s: %+v, want never down", nr.Name, nr)
			}
			continue
		}
		if !nr.Exited || len(nr.Outages) != 1 || nr.Outages[0].Event != "node_kill" || !nr.Outages[0].Undone ||
			nr.DownSec < downFor.Seconds()-0.05 || nr.DownSec > downFor.Seconds()+2 {
			t.Errorf("results.json gossip4: %+v, want exited, down about %s (node_kill until its restart)", nr, downFor)
		}
	}
	t.Logf("MDR %.4f, missing %v; gossip4 %+v; gossip7 %+v; outage %s", g.MDR, g.Missing, k, node["gossip7"], outage)
}
