package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/infra/swarm/swarmtest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// swarmLinksDelays is the one-way delay matrix (ms) of the link case's
// zones z0, z1, z2 (symmetric).
var swarmLinksDelays = [3][3]int{{0, 25, 40}, {25, 0, 15}, {40, 15, 0}}

// swarmLinks is 4 validators over the labelled zones z0-z2 (validator0
// and validator3 share z0: their round trip is the overlay's own), with
// the delay matrix above as [network].zones, under a light load long
// enough to probe every pair.
func swarmLinks(t *testing.T, subnet string, engines []string) string {
	t.Helper()
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("From/to,z0,z1,z2\n")
	for i, row := range swarmLinksDelays {
		fmt.Fprintf(&csv, "z%d,%d,%d,%d\n", i, row[0], row[1], row[2])
	}
	zones := filepath.Join(dir, "zones.csv")
	if err := os.WriteFile(zones, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`name = "swarm-links"
seed = 5

[network]
subnet = %q
topology = "full"
zones = %q

[node.validator]
count = 4
release = "cometbft@v1.0.1"
app = "kvstore"
zones = ["z0", "z1", "z2", "z0"]

[infra]
runner = "swarm"
engines = [%s]

[load]
rate = 50
connections = 1
duration = "40s"
size = 1024
target = "round-robin"
`, subnet, zones, tomlStrings(engines))
	p := filepath.Join(dir, "swarm-links.toml")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// probeLine is one line of `benchnet node linkem-probe`.
type probeLine struct {
	Dst      string  `json:"dst"`
	OK       int     `json:"ok"`
	MinMs    float64 `json:"min_ms"`
	MedianMs float64 `json:"median_ms"`
	Err      string  `json:"err"`
}

// swarmLinksCase runs the link case on the 3-engine swarm (issue 32 item
// 1): while `benchnet run` carries its load, every node's task times TCP
// connects to every other node (SYN through its own agent, SYN-ACK through
// the other's), and each round trip must be the zone matrix's, within the
// agents' lateness bound; the run's link record (merged from every
// agent's) must be checked and met.
func swarmLinksCase(t *testing.T, bin string, c *swarmtest.Cluster) {
	out := t.TempDir()
	start := time.Now()
	run := exec.Command(bin, "run", swarmLinks(t, "10.213.246.0/24", c.Hosts()), "--output", out)
	var log strings.Builder
	run.Stdout, run.Stderr = &log, &log
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	t.Cleanup(func() {
		if run.ProcessState == nil {
			_ = run.Process.Kill()
			<-done
		}
	})
	nodes := []string{"validator0", "validator1", "validator2", "validator3"}
	zone := map[string]int{"validator0": 0, "validator1": 1, "validator2": 2, "validator3": 0}
	var dir string
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) && (dir == "" || reached(dir) < len(nodes)) {
		if dirs, _ := filepath.Glob(filepath.Join(out, "*-swarm-links")); len(dirs) == 1 {
			dir = dirs[0]
		}
		select {
		case err := <-done:
			t.Fatalf("benchnet run ended before its nodes ran: %v\n%s", err, log.String())
		case <-time.After(500 * time.Millisecond):
		}
	}
	if dir == "" || reached(dir) < len(nodes) {
		t.Fatalf("%d nodes not running within 5m:\n%s", len(nodes), log.String())
	}
	time.Sleep(5 * time.Second) // the agents resolve the others' names
	runID := swarmState(t, dir).RunID
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rtt := map[[2]string]probeLine{}
	for _, from := range nodes {
		var dsts []string
		for _, to := range nodes {
			if to != from {
				dsts = append(dsts, to+":26657")
			}
		}
		lines := probeFrom(ctx, t, c, "benchnet-"+runID+"-"+from, bin, dsts)
		for _, l := range lines {
			rtt[[2]string{from, strings.TrimSuffix(l.Dst, ":26657")}] = l
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("benchnet run: %v\n%s", err, log.String())
	}
	t.Logf("benchnet run with links on 3 engines: %s; %s", time.Since(start).Round(time.Millisecond), readyRe.FindString(log.String()))
	base := rtt[[2]string{"validator0", "validator3"}].MedianMs // same zone: the overlay's own round trip
	res, err := (&rundir.Dir{Path: dir}).ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	lc := res.Linkem
	if lc == nil {
		t.Fatalf("results.json has no link check: the agents' record was not read")
	}
	t.Logf("link check: %s", lc.Verdict)
	slack := base + 2*lc.BoundMs + 3 // both directions' lateness, the overlay, the CPU of a loaded box
	var matrix strings.Builder
	for _, from := range nodes {
		fmt.Fprintf(&matrix, "\n%-11s", from)
		for _, to := range nodes {
			if to == from {
				fmt.Fprintf(&matrix, " %16s", "—")
				continue
			}
			p := rtt[[2]string{from, to}]
			want := float64(swarmLinksDelays[zone[from]][zone[to]] + swarmLinksDelays[zone[to]][zone[from]])
			fmt.Fprintf(&matrix, " %6.1f/%-3.0f (%.1f)", p.MedianMs, want, p.MinMs)
			switch {
			case p.OK == 0:
				t.Errorf("%s→%s: no connect: %s", from, to, p.Err)
			case p.MinMs < want:
				t.Errorf("%s→%s: RTT min %.2f ms < configured %.0f ms: not emulated", from, to, p.MinMs, want)
			case p.MedianMs > want+slack:
				t.Errorf("%s→%s: RTT median %.2f ms > configured %.0f ms + %.2f ms (overlay %.2f ms, 2 × bound %.3f ms, 3 ms)", from, to, p.MedianMs, want, slack, base, lc.BoundMs)
			}
		}
	}
	t.Logf("RTT median/configured (min) in ms, from row to column:%s", matrix.String())
	// The check is the agents' own record, over the run's frames. On this
	// box (3 engines, 4 nodes and their agents on 2 cores) its p99 may pass
	// the 1 ms floor (seen: 1.46 ms, max 29 ms, while the RTT matrix above
	// was within 1 ms of configured): the run then says its links are not
	// certified, as it must. What it cannot be is empty, or late for the
	// typical frame, which would be a fault of the agents' timing.
	switch {
	case lc.Frames == 0:
		t.Errorf("link check over no delayed frame: %s", lc.Verdict)
	case lc.P50Ms > lc.BoundMs:
		t.Errorf("link check: the median frame late by %.3f ms > bound %.3f ms: %s", lc.P50Ms, lc.BoundMs, lc.Verdict)
	case !lc.Met:
		t.Logf("link check LATE on this loaded box (the run reports its links uncertified): %s", lc.Verdict)
	}
	ctrs, err := (&rundir.Dir{Path: dir}).ReadLinkemCounters()
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]uint64{}
	for _, p := range ctrs.Ports {
		sent[p.Port] = p.SentPackets
	}
	if sent["validator0>validator1"] == 0 || sent["validator2>validator0"] == 0 {
		t.Errorf("agents' counters have no traffic between zones: %v", sent)
	}
	if left := engineLabelled(t, c, runID); len(left) > 0 {
		t.Errorf("left after run: %v", left)
	}
}

// probeFrom runs `benchnet node linkem-probe` in service's task, on
// whichever engine runs it.
func probeFrom(ctx context.Context, t *testing.T, c *swarmtest.Cluster, service, bin string, dsts []string) []probeLine {
	t.Helper()
	for _, e := range c.Engines() {
		id, err := e.Docker(ctx, "ps", "--quiet", "--filter", "label=com.docker.swarm.service.name="+service)
		if err != nil || strings.TrimSpace(id) == "" {
			continue
		}
		args := append([]string{"exec", strings.Fields(id)[0], bin, "node", "linkem-probe", "--count", "10"}, dsts...)
		out, err := e.Docker(ctx, args...)
		if err != nil {
			t.Fatalf("probe from %s on %s: %v\n%s", service, e.Name, err, out)
		}
		var lines []probeLine
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			var l probeLine
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Dst != "" {
				lines = append(lines, l)
			}
		}
		return lines
	}
	t.Fatalf("no engine runs a task of %s", service)
	return nil
}
