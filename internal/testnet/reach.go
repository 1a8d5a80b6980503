package testnet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReachRoot holds, per run, a bind mount of a run directory that other
// users cannot reach (an --output under a 0700 directory, as `mktemp -d`
// makes): node processes run as nobody and reach their homes, binaries and
// trace files through it, so the privilege drop holds whatever --output is.
// A mount costs no disk; Down removes it, and `benchnet down` after a
// crash (ReleaseReach).
var ReachRoot = "/run/benchnet/runs"

// reachPath is run runID's bind mount.
func reachPath(runID string) string { return filepath.Join(ReachRoot, runID) }

// mountReach bind-mounts dir at run runID's reach path (0755 down from /)
// and returns that path.
func mountReach(dir, runID string) (string, error) {
	if err := os.MkdirAll(ReachRoot, 0o755); err != nil {
		return "", fmt.Errorf("reach mount: %w", err)
	}
	// MkdirAll keeps an existing directory's mode: make the chain
	// searchable, as the mount is there for other users.
	for d := ReachRoot; d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return "", fmt.Errorf("reach mount: %w", err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			return "", fmt.Errorf("reach mount: %s is not searchable by other users", d)
		}
	}
	mp := reachPath(runID)
	if err := os.Mkdir(mp, 0o755); err != nil {
		return "", fmt.Errorf("reach mount: %w", err)
	}
	if err := unix.Mount(dir, mp, "", unix.MS_BIND, ""); err != nil {
		_ = os.Remove(mp)
		return "", fmt.Errorf("reach mount: bind %s at %s: %w", dir, mp, err)
	}
	return mp, nil
}

// ReleaseReach removes run runID's bind mount, if it has one (detached, so
// a process still holding a file there does not keep it). Idempotent.
func ReleaseReach(runID string) error {
	mp := reachPath(runID)
	if _, err := os.Stat(mp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("release %s: %w", mp, err)
	}
	if err := os.Remove(mp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release %s: %w", mp, err)
	}
	return nil
}

// SweepReach removes every run's bind mount (`down --all`).
func SweepReach() error {
	entries, err := os.ReadDir(ReachRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, ReleaseReach(e.Name()))
	}
	return errors.Join(errs...)
}
