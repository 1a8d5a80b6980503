package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The unprivileged user node processes run as (Debian's nobody:nogroup).
const (
	nobodyUID = 65534
	nobodyGID = 65534
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

// Running reports whether pid is a live process (not a zombie), whoever it is.
func Running(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, err := procStat(pid)
	return err == nil && state != 'Z' && state != 'X'
}

func startTime(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

// alive reports whether pid is still the process that started at start (a
// zombie counts as gone: it is dead, only not yet reaped).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := procStat(pid)
	return err == nil && st == start && state != 'Z' && state != 'X'
}

// stopRecorded stops a process known only from a state file (no live
// Runner, so no Wait): SIGTERM to its group, poll until it is gone, SIGKILL
// after grace. It never signals a pid whose start time no longer matches.
func stopRecorded(ctx context.Context, r resource, grace time.Duration) error {
	if !alive(r.PID, r.StartTime) {
		return nil
	}
	target := -r.PGID
	if r.PGID <= 0 {
		target = r.PID
	}
	if err := syscall.Kill(target, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s %s (pid %d): %w", r.Node, r.Name, r.PID, err)
	}
	_ = syscall.Kill(target, syscall.SIGCONT) // a paused process acts on SIGTERM only once thawed
	if waitGone(ctx, r.PID, r.StartTime, grace) {
		return nil
	}
	if alive(r.PID, r.StartTime) {
		if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill %s %s (pid %d): %w", r.Node, r.Name, r.PID, err)
		}
	}
	if !waitGone(ctx, r.PID, r.StartTime, 5*time.Second) {
		return fmt.Errorf("stop %s %s (pid %d): still running after SIGKILL", r.Node, r.Name, r.PID)
	}
	return nil
}

func waitGone(ctx context.Context, pid int, start uint64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive(pid, start) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return !alive(pid, start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// chownTree hands a directory tree to the unprivileged user, without
// following symlinks.
func chownTree(root string) error {
	err := filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, nobodyUID, nobodyGID)
	})
	if err != nil {
		return fmt.Errorf("chown %s to nobody: %w", root, err)
	}
	return nil
}
