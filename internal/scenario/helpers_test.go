package scenario

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
	"github.com/benchnet/benchnet/internal/testenv/testrel"
	"github.com/benchnet/benchnet/internal/testnet"
)

// Subnets of this package's tests: each test has its own, unused elsewhere
// in the tree, so a user's run or another package's test never collides.
const (
	subnetSteady      = "10.213.230.0/24"
	subnetLoadtime    = "10.213.231.0/24"
	subnetNodeDies    = "10.213.232.0/24"
	subnetUnreachable = "10.213.239.0/24" // planned, never set up: see onLoopback
)

var v101 = release.Release{Name: "cometbft", Version: "v1.0.1"}

func needRoot(t *testing.T) { testenv.NeedRoot(t) }

func needTool(t *testing.T, rel release.Release, tool string) string {
	return testrel.NeedTool(t, rel, tool)
}

// example reads examples/<name>, moves it onto subnet and applies edits:
// edits[table][key] = raw TOML value, replacing the key in that table or
// appending it at the table's end (a missing table is appended). Editing the
// text rather than the parsed struct keeps the run directory's manifest.toml
// the manifest that actually ran.
func example(t *testing.T, name, subnet string, edits map[string]map[string]string) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if edits == nil {
		edits = map[string]map[string]string{}
	}
	if edits["network"] == nil {
		edits["network"] = map[string]string{}
	}
	edits["network"]["subnet"] = strconv.Quote(subnet)
	text := editTOML(string(data), edits)
	m, err := manifest.Parse(name, []byte(text))
	if err != nil {
		t.Fatalf("edited %s does not parse: %v\n%s", name, err, text)
	}
	return m
}

// editTOML applies edits (see example) to a flat TOML document of [tables].
func editTOML(doc string, edits map[string]map[string]string) string {
	var out []string
	done := map[string]map[string]bool{}
	section := ""
	flush := func() {
		for k, v := range edits[section] {
			if !done[section][k] {
				out = append(out, k+" = "+v)
			}
		}
		if done[section] == nil {
			done[section] = map[string]bool{}
		}
		for k := range edits[section] {
			done[section][k] = true
		}
	}
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "[") {
			flush()
			section = strings.Trim(trim, "[]")
			out = append(out, line)
			continue
		}
		if key, _, ok := strings.Cut(trim, "="); ok && !strings.HasPrefix(trim, "#") {
			key = strings.TrimSpace(key)
			if v, ok := edits[section][key]; ok {
				if done[section] == nil {
					done[section] = map[string]bool{}
				}
				done[section][key] = true
				out = append(out, key+" = "+v)
				continue
			}
		}
		out = append(out, line)
	}
	flush()
	for sec, kv := range edits {
		if done[sec] != nil {
			continue
		}
		out = append(out, "", "["+sec+"]")
		for k, v := range kv {
			out = append(out, k+" = "+v)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func outputDir(t *testing.T) string { return testenv.OutputDir(t) }

// runIdentity reads what a finished run leaves about its resources: the
// runner's run id (state.json) and the node pids (node_started events).
func runIdentity(t *testing.T, dir string) (runID string, pids map[string]int) {
	t.Helper()
	var st struct {
		RunID string `json:"run_id"`
	}
	data, err := os.ReadFile(filepath.Join(dir, rundir.State))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil || st.RunID == "" {
		t.Fatalf("state.json has no run_id (%v): %s", err, data)
	}
	pids = map[string]int{}
	for _, e := range readEvents(t, dir) {
		var pid int
		if e.Kind == rundir.EventNodeStarted {
			if _, err := fmt.Sscanf(e.Detail, "pid %d", &pid); err != nil {
				t.Fatalf("node_started event %q: %v", e.Detail, err)
			}
			pids[e.Node] = pid
		}
	}
	return st.RunID, pids
}

func readEvents(t *testing.T, dir string) []rundir.Event {
	t.Helper()
	d, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ev, err := d.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// eventTime is the time of the first event of kind.
func eventTime(t *testing.T, events []rundir.Event, kind string) time.Time {
	t.Helper()
	for _, e := range events {
		if e.Kind == kind {
			return e.Time
		}
	}
	t.Fatalf("no %s event", kind)
	return time.Time{}
}

// checkNothingLeft fails when any namespace, link or process of the run
// still exists.
func checkNothingLeft(t *testing.T, runID string, pids map[string]int) {
	t.Helper()
	var list []int
	for _, p := range pids {
		list = append(list, p)
	}
	left, err := testnet.Leftovers(context.Background(), runID, list)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// readCSV reads a whole CSV file: header, then rows as header-keyed maps.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var rows []map[string]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = rec[i]
		}
		rows = append(rows, row)
	}
}

// cpuShares computes, from metrics/proc.csv, the CPU used between from and
// to by the harness (node "benchnet") and by all node processes together,
// each as a share of one core (cpu seconds / wall seconds), over the span
// of the samples nearest the window's ends.
func cpuShares(t *testing.T, dir string, from, to time.Time) (harness, nodes float64, span time.Duration) {
	t.Helper()
	type sample struct {
		t   int64
		cpu float64
	}
	first, last := map[string]sample{}, map[string]sample{}
	for _, r := range readCSV(t, filepath.Join(dir, rundir.ProcCSV.Name)) {
		ns, err1 := strconv.ParseInt(r["time_ns"], 10, 64)
		cpu, err2 := strconv.ParseFloat(r["cpu_seconds"], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("proc.csv row %v: %v %v", r, err1, err2)
		}
		if ns < from.UnixNano() || ns > to.UnixNano() {
			continue
		}
		n := r["node"]
		if _, ok := first[n]; !ok {
			first[n] = sample{ns, cpu}
		}
		last[n] = sample{ns, cpu}
	}
	h, ok := first[rundir.HarnessNode]
	if !ok {
		t.Fatalf("proc.csv has no %q samples between %s and %s", rundir.HarnessNode, from, to)
	}
	wall := float64(last[rundir.HarnessNode].t-h.t) / 1e9
	if wall <= 0 {
		t.Fatalf("proc.csv: one harness sample in the window")
	}
	for n, f := range first {
		share := (last[n].cpu - f.cpu) / wall
		if n == rundir.HarnessNode {
			harness = share
		} else {
			nodes += share
		}
	}
	return harness, nodes, time.Duration(wall * float64(time.Second))
}

// testnetOptions: a fresh reachable output root, a bounded ready wait, logs
// into the test log.
func testnetOptions(t *testing.T) testnet.Options {
	return testnet.Options{Output: outputDir(t), ReadyTimeout: 60 * time.Second, Log: testenv.LogWriter(t)}
}

// onLoopback moves every node of a resolved plan to a loopback address where
// nothing listens, so connects are refused at once (the manifest refuses a
// loopback subnet, and an unassigned private address must not be dialled:
// it could leave the machine).
func onLoopback(p *plan.Testnet) {
	for i := range p.Nodes {
		p.Nodes[i].Addr = netip.AddrFrom4([4]byte{127, 0, 213, byte(2 + i)})
	}
}

// runHosted runs the manifest text as a steady run whose nodes serve
// benchnet's own programs (accounts app, gossip hosts) from exe.
func runHosted(t *testing.T, name, text, exe string, timeout time.Duration) Outcome {
	t.Helper()
	m, err := manifest.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	opts := testnetOptions(t)
	opts.HostExecutable = exe
	out, err := Steady(ctx, m, Options{Up: opts, Log: testenv.LogWriter(t)})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// steadyRun runs m to the end with progress in the test log and returns
// its outcome, failing the test when the run fails or has no results.
func steadyRun(t *testing.T, m *manifest.Manifest, timeout time.Duration) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	out, err := Steady(ctx, m, Options{
		Up:  testnetOptions(t),
		Log: testenv.LogWriter(t), Progress: testenv.LogWriter(t),
	})
	if err != nil {
		t.Fatalf("steady run: %v", err)
	}
	t.Logf("run took %s: %s", time.Since(start).Round(time.Millisecond), out.RunDir)
	if out.Results == nil {
		t.Fatal("no results")
	}
	return out
}
