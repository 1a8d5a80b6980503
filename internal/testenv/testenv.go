// Package testenv holds what integration tests across packages share: the
// skips (root, a cached release binary) with messages that say how to get
// them, a run-directory root that node processes can reach, and a writer
// that sends progress lines to the test log.
package testenv

import (
	"os"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/plan"
)

// NeedRoot skips unless the test runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, veth and bridges (run the tests as root)")
	}
}

// NeedTool skips unless tool of rel is in the binary cache, and returns its
// path: tests never build releases (`benchnet setup --tests` does).
func NeedTool(t testing.TB, rel plan.Release, tool string) string {
	t.Helper()
	bin := binaries.Path(rel, tool)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not built: run `go run ./cmd/benchnet setup --tests` first", bin)
	}
	return bin
}

// OutputDir is a run-directory root under /tmp that the unprivileged node
// user can reach (t.TempDir's parents are 0700), so nodes run as they run
// for users. BENCHNET_TEST_KEEP=1 keeps it for a post-mortem.
func OutputDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "benchnet-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("BENCHNET_TEST_KEEP") != "" {
			t.Logf("BENCHNET_TEST_KEEP: run directories kept in %s", d)
			return
		}
		_ = os.RemoveAll(d)
	})
	return d
}

// LogWriter sends each write to the test log.
func LogWriter(t testing.TB) Writer { return Writer{t} }

// Writer is an io.Writer into a test's log.
type Writer struct{ t testing.TB }

func (w Writer) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
