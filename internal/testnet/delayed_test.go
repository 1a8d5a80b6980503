package testnet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/testenv"
)

// lateManifest: three validators that cannot start (a config value the
// release cannot parse), so Up fails within a second or two, and a full node
// whose start is delayed well past that failure.
const lateManifest = `
name = "late"
seed = 1

[network]
subnet = "10.213.227.0/24"

[node.validator]
count = 3
release = "cometbft@v1.0.1"
app = "kvstore"

[node.validator.config]
"mempool.size" = "not-a-number"

[node.full]
role = "full"
count = 1
release = "cometbft@v1.0.1"
app = "kvstore"
start_delay = "%DELAY%"
`

// TestFailedUpStopsDelayedStarts: when Up fails before a delayed node's
// start, the delayed start is cancelled and awaited before the teardown, so
// it never runs after Up returned and no process of the run survives.
func TestFailedUpStopsDelayedStarts(t *testing.T) {
	needRelease(t, "v1.0.1")
	const delay = 8 * time.Second
	m, err := manifest.Parse("late.toml", []byte(strings.Replace(lateManifest, "%DELAY%", delay.String(), 1)))
	if err != nil {
		t.Fatal(err)
	}
	var upReturned atomic.Bool
	var late atomic.Int32
	testHookDelayedStart = func(string) {
		if upReturned.Load() {
			late.Add(1)
		}
	}
	t.Cleanup(func() { testHookDelayedStart = nil })

	out := outputDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	tn, err := Up(ctx, m, Options{Output: out, ReadyTimeout: 30 * time.Second, Log: testenv.LogWriter(t)})
	upReturned.Store(true)
	if err == nil {
		_ = tn.Down(ctx)
		t.Fatal("Up succeeded with validators that cannot start")
	}
	took := time.Since(start)
	t.Logf("Up failed after %s: %v", took.Round(time.Millisecond), err)
	if took >= delay {
		t.Fatalf("Up failed after %s, not before the delayed start (%s): the test proves nothing", took, delay)
	}

	// Past the moment the delayed start was due.
	time.Sleep(time.Until(start.Add(delay + 2*time.Second)))
	if n := late.Load(); n > 0 {
		t.Errorf("%d delayed start(s) ran after Up had failed and torn down", n)
	}

	dirs, _ := filepath.Glob(filepath.Join(out, "*-late"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	if procs := processesUnder(dirs[0]); len(procs) > 0 {
		t.Errorf("processes of the failed run still alive: %v", procs)
	}
	var st struct {
		RunID string `json:"run_id"`
	}
	raw, err := os.ReadFile(filepath.Join(dirs[0], "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil || st.RunID == "" {
		t.Fatalf("state file has no run id (%v): %s", err, raw)
	}
	left, err := Leftovers(ctx, st.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after a failed Up: %v", left)
	}
}

// processesUnder lists live processes whose command line names dir (node
// processes get their home under the run directory as an argument).
func processesUnder(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if s := strings.ReplaceAll(string(cmd), "\x00", " "); strings.Contains(s, dir) {
			out = append(out, e.Name()+": "+s)
		}
	}
	return out
}
