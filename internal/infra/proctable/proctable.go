// Package proctable is the harness-side process plumbing every runner
// shares: process identity from /proc (pid plus start time, so a reused pid
// is never mistaken for ours), the registry of live runs that `benchnet
// down` and `status` read, and the checks at the start of a runner's Setup
// and Start. Runners import it instead of each other (issue 22).
package proctable

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// procStat returns a process's state letter and start time (field 22 of
// /proc/<pid>/stat, clock ticks after boot).
func procStat(pid int) (state byte, start uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// comm (field 2) may contain spaces and parentheses: split after the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	start, err = strconv.ParseUint(f[19], 10, 64) // field 22 overall
	if err != nil {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return f[0][0], start, nil
}

// Stat returns a process's state letter (R, S, Z, ...) and start time.
func Stat(pid int) (state byte, start uint64, err error) { return procStat(pid) }

// Running reports whether pid is a live process (not a zombie), whoever it is.
func Running(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, err := procStat(pid)
	return err == nil && state != 'Z' && state != 'X'
}

// StartTime is a process's start time (clock ticks since boot) from /proc,
// which tells it apart from a later process with the same pid.
func StartTime(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

// Alive reports whether pid is still the process that started at start (a
// zombie counts as gone: it is dead, only not yet reaped).
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := procStat(pid)
	return err == nil && st == start && state != 'Z' && state != 'X'
}

// WaitGone waits up to d for the process to end; false if it still runs.
func WaitGone(ctx context.Context, pid int, start uint64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for Alive(pid, start) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return !Alive(pid, start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Registry of live runs: <runtime dir>/active/<runid> holds the absolute path
// of the run's state file, so `benchnet down` with no argument finds them all.

// RuntimeDirEnv overrides the runtime directory (default /run/benchnet).
const RuntimeDirEnv = "BENCHNET_RUNTIME_DIR"

// ActiveDir is the directory of the registry of live runs.
func ActiveDir() string { return activeDir() }

func activeDir() string {
	dir := os.Getenv(RuntimeDirEnv)
	if dir == "" {
		dir = "/run/benchnet"
	}
	return filepath.Join(dir, "active")
}

// Register records a run of any runner in the registry of live runs, so
// `benchnet down` and `status` with no argument find it.
func Register(runID, statePath string) error {
	abs, err := filepath.Abs(statePath)
	if err != nil {
		return fmt.Errorf("register run %s: %w", runID, err)
	}
	if err := os.MkdirAll(activeDir(), 0o755); err != nil {
		return fmt.Errorf("register run %s: %w", runID, err)
	}
	return rundir.WriteAtomic(filepath.Join(activeDir(), runID), []byte(abs+"\n"))
}

// Unregister drops a run from the registry of live runs.
func Unregister(runID string) error {
	err := os.Remove(filepath.Join(activeDir(), runID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unregister run %s: %w", runID, err)
	}
	return nil
}

// ActiveRuns returns the state file of every registered run, sorted by run
// id. Entries whose state file is gone are dropped from the registry.
func ActiveRuns() ([]string, error) {
	runs, err := activeRuns()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = runs[id]
	}
	return out, nil
}

// ActiveRunIDs maps run id to state file path for every registered run.
func ActiveRunIDs() (map[string]string, error) { return activeRuns() }

func activeRuns() (map[string]string, error) {
	entries, err := os.ReadDir(activeDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list active runs: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !statefile.ValidRunID(e.Name()) {
			continue // temp files, strangers
		}
		data, err := os.ReadFile(filepath.Join(activeDir(), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("list active runs: %w", err)
		}
		path := strings.TrimRight(string(data), "\n \r")
		if _, err := os.Stat(path); err != nil {
			_ = Unregister(e.Name())
			continue
		}
		out[e.Name()] = path
	}
	return out, nil
}

// ClaimSetup is the start of every runner's Setup: the run id must be
// valid, and a runner is set up once (*planned, guarded by mu, takes p).
func ClaimSetup(runID string, mu *sync.Mutex, planned **plan.Testnet, p *plan.Testnet) error {
	if !statefile.ValidRunID(runID) {
		return fmt.Errorf("run id %q: want 6 lowercase hex digits", runID)
	}
	mu.Lock()
	defer mu.Unlock()
	if *planned != nil {
		return fmt.Errorf("run %s is already set up", runID)
	}
	*planned = p
	return nil
}

// CheckStart is what a runner checks before it starts proc: the run is not
// being cleaned up, is set up (p is its plan), has proc's node, and proc
// has a command.
func CheckStart(runID string, closing bool, p *plan.Testnet, proc infra.Process) error {
	key := proc.Node + "/" + proc.Name
	switch {
	case closing:
		return fmt.Errorf("start %s: run %s is being cleaned up", key, runID)
	case p == nil:
		return fmt.Errorf("start %s: run %s is not set up", key, runID)
	case p.Node(proc.Node) == nil:
		return fmt.Errorf("start %s: no node %q in the plan", key, proc.Node)
	case len(proc.Argv) == 0:
		return fmt.Errorf("start %s: empty argv", key)
	}
	return nil
}

// ReportExit sends ex on a runner's Exited channel unless the exit was
// expected (a stop or kill asked for it, or the cleanup). It never blocks:
// with nobody listening and the buffer full the report is dropped.
func ReportExit(exited chan<- infra.Exit, ex infra.Exit, expected bool) {
	if expected {
		return
	}
	select {
	case exited <- ex:
	default:
	}
}

// PortProvider hands out one TAP device per node, created in the root
// namespace, whose frames the provider (the userspace link emulator) owns.
// linkem.Userspace implements it.
type PortProvider interface {
	AddPort(name string) (tap string, err error)
}

// NetnsName is the network namespace a node of run runID lives in (the
// local runner's naming; the docker runner links its containers' namespaces
// under the same name so link backends find either).
func NetnsName(runID, node string) string { return "bn-" + runID + "-" + node }

// NodePIDs returns, from a state file, the pid of every node's "node"
// process that is still the process that was started (nil on any error),
// whichever runner wrote it (a container's main process is recorded by its
// host pid too).
func NodePIDs(statePath string) map[string]int {
	s, err := statefile.Read(statePath)
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, r := range s.Doc.Resources {
		if r.Kind == statefile.KindProcess && r.Name == "node" && Alive(r.PID, r.StartTime) {
			out[r.Node] = r.PID
		}
	}
	return out
}
