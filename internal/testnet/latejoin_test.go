package testnet

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// lateJoinManifest: four validators and two full nodes whose start is
// delayed by %DELAY% (examples/seeds.toml has delayed full nodes too, but its
// PEX bootstrap takes about 30 s to be ready, longer than a short delay).
const lateJoinManifest = `
name = "latejoin"
seed = 1

[network]
subnet = "%SUBNET%"

[node.validator]
count = 4

[node.full]
role = "full"
count = 2
start_delay = "%DELAY%"
`

func lateJoin(t *testing.T, subnet string, delay time.Duration) *manifest.Manifest {
	t.Helper()
	raw := strings.NewReplacer("%SUBNET%", subnet, "%DELAY%", delay.String()).Replace(lateJoinManifest)
	m, err := manifest.Parse("latejoin.toml", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLateStartJoins: with LateStarts, Up returns once the nodes without a
// start delay are ready; the delayed full nodes start afterwards (an event
// each), block-sync to the tip, and Down leaves nothing of the run.
func TestLateStartJoins(t *testing.T) {
	needRelease(t, "v1.0.1")
	const delay = 10 * time.Second
	m := lateJoin(t, "10.213.171.0/24", delay)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 60 * time.Second, Log: testenv.LogWriter(t), LateStarts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Down(context.Background()) })
	upTook := time.Since(start)
	t.Logf("Up returned after %s", upTook.Round(time.Millisecond))
	full := []string{"full0", "full1"}
	for _, n := range full {
		if !tn.NotStarted(n) {
			t.Fatalf("%s already started when Up returned after %s (delay %s): the test proves nothing", n, upTook, delay)
		}
	}
	ready := time.Now()

	// Each full node starts, then catches up: not catching up and within a
	// block of the validators.
	val := cometrpc.New(tn.Plan.Node("validator0").RPCURL())
	for _, n := range full {
		c := cometrpc.New(tn.Plan.Node(n).RPCURL())
		deadline := time.Now().Add(90 * time.Second)
		for {
			if time.Now().After(deadline) {
				t.Fatalf("%s not at the tip within 90 s of Up", n)
			}
			if !tn.NotStarted(n) {
				st, err := c.Status(ctx)
				vst, verr := val.Status(ctx)
				if err == nil && verr == nil && !st.CatchingUp && st.Height > 0 && st.Height >= vst.Height-1 {
					t.Logf("%s at the tip (height %d, validator0 %d) %s after Up returned", n, st.Height, vst.Height, time.Since(ready).Round(time.Millisecond))
					break
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// The starts are events, after the testnet was ready.
	events, err := tn.Dir.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	var readyAt time.Time
	started, joined := map[string]time.Time{}, map[string]time.Time{}
	for _, e := range events {
		switch e.Kind {
		case rundir.EventTestnetReady:
			readyAt = e.Time
		case rundir.EventNodeStarted:
			started[e.Node] = e.Time
		case rundir.EventNodeJoined:
			joined[e.Node] = e.Time
		}
	}
	// A late node counts as running (the collectors reach it) once its
	// RPC answers: node_joined, after its start.
	for _, n := range full {
		if at, ok := joined[n]; !ok || at.Before(started[n]) {
			t.Errorf("%s: node_joined at %v, want one after its node_started at %v", n, at, started[n])
		}
	}
	for _, n := range full {
		at, ok := started[n]
		if !ok {
			t.Errorf("no node_started event for %s", n)
			continue
		}
		if !at.After(readyAt) {
			t.Errorf("%s started at %s, not after testnet_ready at %s", n, at, readyAt)
		}
	}

	var pids []int
	for _, pid := range tn.PIDs() {
		pids = append(pids, pid)
	}
	if len(pids) != len(tn.Plan.Nodes) {
		t.Fatalf("%d node pids, want %d", len(pids), len(tn.Plan.Nodes))
	}
	if err := tn.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if left, err := Leftovers(ctx, tn.RunID, pids); err != nil || len(left) > 0 {
		t.Errorf("left after down: %v %v", left, err)
	}
}

// TestDownCancelsLateStarts: Down before a late start is due cancels it: no
// start runs after Down and nothing of the run is left.
func TestDownCancelsLateStarts(t *testing.T) {
	needRelease(t, "v1.0.1")
	const delay = 20 * time.Second
	m := lateJoin(t, "10.213.172.0/24", delay)
	var down atomic.Bool
	var late atomic.Int32
	testHookDelayedStart = func(string) {
		if down.Load() {
			late.Add(1)
		}
	}
	t.Cleanup(func() { testHookDelayedStart = nil })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	tn, err := Up(ctx, m, Options{Output: outputDir(t), ReadyTimeout: 60 * time.Second, Log: testenv.LogWriter(t), LateStarts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Down(context.Background()) })
	if time.Since(start) >= delay {
		t.Fatalf("Up took %s, past the delay %s: the test proves nothing", time.Since(start), delay)
	}
	err = tn.Down(ctx)
	down.Store(true)
	if err != nil {
		t.Fatalf("down: %v", err)
	}
	time.Sleep(time.Until(start.Add(delay + 2*time.Second)))
	if n := late.Load(); n > 0 {
		t.Errorf("%d delayed start(s) ran after Down", n)
	}
	if procs := processesUnder(tn.Dir.Path); len(procs) > 0 {
		t.Errorf("processes of the run still alive: %v", procs)
	}
	if left, err := Leftovers(ctx, tn.RunID, nil); err != nil || len(left) > 0 {
		t.Errorf("left after down: %v %v", left, err)
	}
}
