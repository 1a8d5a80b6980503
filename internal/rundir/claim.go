package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// claimTries bounds the -2, -3 … suffixes Claim tries before giving up.
const claimTries = 10000

// Stamp is the timestamp every claimed directory's name starts with.
func Stamp(now time.Time) string { return now.UTC().Format("20060102-150405") }

// Claim makes a new directory parent/name, or name-2, name-3 … when that
// exists, with the sub-directories subs inside it, and returns its absolute
// path. The exclusive mkdir makes the check and the creation one step, so
// two callers (two runs started in one second, a parent experiment and its
// steps) never share a directory. It is the one claim helper of benchnet:
// run directories, sweep cells, sweep/compare/soak/qa directories and an
// experiment's sub-experiments all go through it.
func Claim(parent, name string, subs ...string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	base := filepath.Join(parent, name)
	path := base
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > claimTries {
			return "", fmt.Errorf("create %s: %w", path, err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	for _, sub := range subs {
		if err := os.Mkdir(filepath.Join(path, sub), 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", path, err)
		}
	}
	return filepath.Abs(path)
}

// ClaimStamped claims parent/<timestamp>-<name>: the name of every run,
// sweep, compare, soak and qa directory.
func ClaimStamped(parent, name string, now time.Time, subs ...string) (string, error) {
	return Claim(parent, Stamp(now)+"-"+name, subs...)
}
