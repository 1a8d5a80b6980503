package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Subnets of the fault tests.
const (
	subnetPerturbKill = "10.213.201.0/24"
	subnetPerturbHalt = "10.213.202.0/24"
	subnetRotate      = "10.213.203.0/24"
	subnetWipeApp     = "10.213.204.0/24"
)

// faultManifest is 4 validators (plus extra groups) under a light load to
// every validator, with the given fault tables appended.
func faultManifest(t *testing.T, subnet, groups, load, faults string) *manifest.Manifest {
	t.Helper()
	src := fmt.Sprintf(`name = "faults"
seed = 3
%s
[network]
subnet = %q
[node.validator]
count = 4
release = "cometbft@v1.0.1"
%s
[load]
rate = 40
target = "all"
warmup = "30s"
grace = "8s"
%s
%s`, "", subnet, groups, load, faults)
	m, err := manifest.Parse("faults.toml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return m
}

// checkIdentity: every tx sent has one end state, none unaccounted.
func checkIdentity(t *testing.T, res *rundir.Results) {
	t.Helper()
	if res == nil {
		t.Fatal("no results")
	}
	a := res.Accounting
	if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
		t.Errorf("identity broken: sent %d != committed %d + rejected %d + lost %d + pending %d", a.Sent, a.Committed, a.Rejected, a.Lost, a.Pending)
	}
	t.Logf("accounting: %+v", a)
}

func readFaults(t *testing.T, dir string) *rundir.FaultResults {
	t.Helper()
	in, err := analyze.LoadFaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	fr := analyze.ComputeFaults(in)
	if fr == nil {
		t.Fatal("no fault results")
	}
	t.Logf("faults:\n%s", analyze.FaultSummary(fr))
	return fr
}

// runOnePerturbation runs m, a manifest with one [[perturb]] entry on a
// chain that must not halt, and returns the run and that entry's effects.
func runOnePerturbation(t *testing.T, m *manifest.Manifest) (Outcome, rundir.Perturbation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := Steady(ctx, m, Options{Up: testnetOptions(t), Log: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkIdentity(t, out.Results)
	fr := readFaults(t, out.RunDir)
	if len(fr.Perturbations) != 1 {
		t.Fatalf("perturbations: %+v", fr.Perturbations)
	}
	if fr.Halted != "" {
		t.Errorf("halted: %s", fr.Halted)
	}
	return out, fr.Perturbations[0]
}

// checkEvents checks that the run recorded each of want ("kind/node") and
// returns its events.
func checkEvents(t *testing.T, dir string, want ...string) []rundir.Event {
	t.Helper()
	events := readEvents(t, dir)
	kinds := map[string]bool{}
	for _, e := range events {
		kinds[e.Kind+"/"+e.Node] = true
	}
	for _, k := range want {
		if !kinds[k] {
			t.Errorf("no %s event", k)
		}
	}
	return events
}

// TestKilledValidatorRestarts: one validator of four killed for 6 s keeps
// the chain going (2/3 of the power remains), and once restarted with its
// home it is back at the tip.
func TestKilledValidatorRestarts(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	m := faultManifest(t, subnetPerturbKill, "", `duration = "20s"`, `
[[perturb]]
at = "4s"
node = "validator2"
action = "kill"
for = "6s"
`)
	out, p := runOnePerturbation(t, m)
	if !p.Undone || p.Blocks == 0 {
		t.Errorf("one validator down of four: the chain should go on; %d blocks in the outage, undone %v", p.Blocks, p.Undone)
	}
	if back := p.BackAtTip["validator2"]; back < 0 || back > 30 {
		t.Errorf("validator2 back at the tip after %.1f s, want within 30 s", back)
	}
	if len(p.Txs) == 0 {
		t.Errorf("no tx was sent to the killed node during its outage: nothing tested")
	}
	if n := p.Txs[rundir.StateCommitted]; n > 40 {
		// Only what was in flight at the kill (at most ~1 s of its 40 tx/s) may commit.
		t.Errorf("%d txs sent to the dead validator committed: %v", n, p.Txs)
	}
	checkEvents(t, out.RunDir, "node_kill/validator2", "node_restart/validator2", "perturb_step/validator2")
	if fr, err := (&rundir.Dir{Path: out.RunDir}).ReadFaults(); err != nil {
		t.Errorf("faults.json: %v", err)
	} else if len(fr.Perturbations) != 1 || fr.Perturbations[0].Action != "kill" {
		t.Errorf("faults.json: %+v, want the one kill", fr.Perturbations)
	}
	if _, err := os.Stat(filepath.Join(out.RunDir, rundir.HeightsCSV.Name)); err != nil {
		t.Errorf("heights.csv: %v", err)
	}
}

// TestWipeRestartSocketApp: a full node with its app in a second process
// (abci-cli's kvstore, which persists its state under the node's home) is
// stopped, reset to genesis through the CometBFT driver and started again:
// node and app both start from genesis (an app store left at its old
// height would fail the handshake), block-sync, and are back at the tip.
func TestWipeRestartSocketApp(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	needTool(t, v101, "abci-cli")
	m := faultManifest(t, subnetWipeApp, `[node.full]
role = "full"
count = 1
release = "cometbft@v1.0.1"
app = "kvstore-socket"`, `duration = "24s"`, `
[[perturb]]
at = "6s"
node = "full0"
action = "wipe-restart"
for = "4s"
`)
	out, p := runOnePerturbation(t, m)
	back, ok := p.BackAtTip["full0"]
	if !ok || back < 0 || back > 30 {
		t.Errorf("full0 back at the tip after %.1f s (measured %v), want within 30 s", back, ok)
	}
	for _, e := range checkEvents(t, out.RunDir, "node_stop/full0", "node_wipe/full0", "node_restart/full0") {
		if e.Kind == rundir.EventPerturbError || e.Kind == rundir.EventNodeExited {
			t.Errorf("event %s %s: %s", e.Kind, e.Node, e.Detail)
		}
	}
	// The restarted node replayed the chain from height 1: its heights
	// went back below where they were before the wipe.
	samples, _, err := rundir.HeightsCSV.ReadFile(filepath.Join(out.RunDir, rundir.HeightsCSV.Name))
	if err != nil {
		t.Fatal(err)
	}
	var before, low int64
	wiped := false
	for _, s := range samples {
		if s.Node != "full0" {
			continue
		}
		switch {
		case !wiped && s.Height >= before:
			before = s.Height
		case !wiped:
			wiped, low = true, s.Height
		case s.Height < low:
			low = s.Height
		}
	}
	if !wiped || before < 3 || low >= before {
		t.Errorf("full0's heights: %d before the wipe, then %d: want a restart from genesis (wiped %v)", before, low, wiped)
	}
}

// TestHaltReported: one validator killed and one paused leave 2 of 4: no
// quorum. The chain halts, the run ends as failed past halt_limit with the
// reason, and every tx still has an end state.
func TestHaltReported(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	m := faultManifest(t, subnetPerturbHalt, "", `duration = "40s"`, `
[[perturb]]
at = "3s"
node = "validator1"
action = "kill"
[[perturb]]
at = "3s"
node = "validator2"
action = "pause"
`)
	m.HaltLimit.Duration = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := Steady(ctx, m, Options{Up: testnetOptions(t), Log: testWriter{t}})
	if !errors.Is(err, ErrHalted) {
		t.Fatalf("run error %v, want %v", err, ErrHalted)
	}
	t.Logf("run ended after %s: %v", time.Since(start).Round(time.Second), err)
	checkIdentity(t, out.Results)
	fr := readFaults(t, out.RunDir)
	if !strings.Contains(fr.Halted, "halt_limit 8s") {
		t.Errorf("halt reason %q", fr.Halted)
	}
	for _, p := range fr.Perturbations {
		if p.Undone || p.Blocks > 1 {
			t.Errorf("perturb[%d]: %d blocks during a halt (undone %v)", p.Entry, p.Blocks, p.Undone)
		}
	}
	md, err := os.ReadFile(filepath.Join(out.RunDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "halted") {
		t.Errorf("report.md does not say the chain halted")
	}
}

// TestRotateCycle: one ephemeral full node starts empty during the load,
// block-syncs, is measured at the tip, stopped and wiped.
func TestRotateCycle(t *testing.T) {
	needRoot(t)
	needTool(t, v101, "cometbft")
	m := faultManifest(t, subnetRotate, `[node.eph]
role = "full"
count = 1
release = "cometbft@v1.0.1"`, `duration = "30s"`, `
[rotate]
group = "eph"
cycles = 1
start = "8s"
keep = "3s"
`)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := Steady(ctx, m, Options{Up: testnetOptions(t), Log: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkIdentity(t, out.Results)
	fr := readFaults(t, out.RunDir)
	if len(fr.Cycles) != 1 {
		t.Fatalf("cycles: %+v", fr.Cycles)
	}
	// The collector leaves the node alone until it joined: no failed
	// scrape before its start.
	var started time.Time
	for _, e := range readEvents(t, out.RunDir) {
		if e.Kind == rundir.EventNodeStarted && e.Node == "eph0" && started.IsZero() {
			started = e.Time
		}
		if e.Kind == rundir.EventScrapeFailed && e.Node == "eph0" {
			if started.IsZero() {
				t.Errorf("scrape_failed for eph0 before it started: %+v", e)
			} else {
				t.Logf("scrape_failed for eph0 after its start: %+v", e)
			}
		}
	}
	c := fr.Cycles[0]
	if c.CatchUpS <= 0 || c.CatchUpS > 60 || c.Height < 2 || c.BlocksPerS <= 0 || c.StopNs == 0 || c.Error != "" {
		t.Errorf("cycle: %+v", c)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
