// Package history is the store of every result benchnet keeps: an embedded
// SQLite database (the pure-Go driver modernc.org/sqlite, so the binary
// stays static) with one record per comparable unit (a run, a variant of a
// compare, a load of a sweep, a step and build of a QA). A record is keyed
// by what makes two results comparable: scenario and testbed, load and
// emulation profile, the machine's fingerprint, the benchnet version and the
// build. The schema is documented in docs/history.md; anyone can open the
// database with the sqlite3 CLI.
//
// Reading finished run directories into records (FromRunDir) and writing
// them (Store.Add) are separate: the directories are read outside any
// transaction, and each record is then one short transaction, so a writer
// killed mid-way leaves no half record and two writers both land.
package history

import (
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/release"
)

// EnvPath names the environment variable that overrides the default
// database (tests point it at a temporary file).
const EnvPath = "BENCHNET_HISTORY"

// FileName is the database's name in the cache directory.
const FileName = "history.db"

// DefaultPath is the database used without --history: $BENCHNET_HISTORY,
// else history.db beside the release cache (release.CacheRoot:
// $BENCHNET_CACHE, $XDG_CACHE_HOME/benchnet or ~/.cache/benchnet).
func DefaultPath() string {
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	return filepath.Join(release.CacheRoot(), FileName)
}
