package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra/proctable"
)

// The unprivileged user node processes run as (Debian's nobody:nogroup).
const (
	nobodyUID = 65534
	nobodyGID = 65534
)

func procStat(pid int) (byte, uint64, error) { return proctable.Stat(pid) }

func startTime(pid int) (uint64, error) { return proctable.StartTime(pid) }
func alive(pid int, start uint64) bool  { return proctable.Alive(pid, start) }

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
	return proctable.WaitGone(ctx, pid, start, d)
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
