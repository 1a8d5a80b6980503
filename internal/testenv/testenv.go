// Package testenv holds what integration tests across packages share: the
// skips (root, a command, a file, ../shared data) with
// messages that say how to get them, a run-directory root that node
// processes can reach, a writer that sends progress lines to the test log,
// and the golden-file helper with the one -update flag (golden.go).
//
// It imports nothing of the project, so any package's internal tests can use
// it; release binaries are found by its subpackage testrel.
//
// Integration tests (network namespaces, real nodes, docker, release
// binaries) sit behind one switch, BENCHNET_INTEGRATION=1, which
// scripts/test.sh sets: every such test calls Integration first, directly or
// through NeedRoot or testrel.NeedTool. Without the switch, or with -short,
// `go test ./...` runs the unit tests alone.
//
// Under CI (CI=true) every such skip is a failure instead: a green CI must
// mean the integration tests ran, not that they quietly stepped aside. CI
// turns the switch on by itself.
//
// Integration also raises the testbed check's CPU-steal limit to
// TestStealPct for the test process and the commands it starts: a
// real-node test tests the code, not the hypervisor (this lab's steal sat
// at 3-13 % over load windows on 2026-11-29, and a run past the 5 %
// default is invalid). The steal check has its own unit tests, which set
// the limit they mean.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// UnderCI reports whether the tests run under CI (CI=true, as CI sets it).
func UnderCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// Skip skips an integration test for a missing prerequisite, or fails it
// under CI, where every prerequisite is installed by the test command.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if UnderCI() {
		t.Fatalf("integration test cannot run under CI (CI=true forbids skipping): %s", msg)
		return // only reached with a fake TB: Fatalf ends a real test
	}
	t.Skip(msg)
}

// IntegrationEnv names the switch that turns the integration tests on.
const IntegrationEnv = "BENCHNET_INTEGRATION"

// IntegrationOn reports whether the integration tests are switched on:
// BENCHNET_INTEGRATION=1 (or true), or under CI.
func IntegrationOn() bool {
	v := strings.ToLower(os.Getenv(IntegrationEnv))
	return v == "1" || v == "true" || UnderCI()
}

// Integration marks t as an integration test: it starts namespaces, real
// nodes, containers or release binaries. It skips unless the switch is on,
// and always with -short; under CI a skip is a failure, as for any
// prerequisite.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		Skip(t, "integration test: not run with -short")
		return
	}
	if !IntegrationOn() {
		t.Skip("integration test: set " + IntegrationEnv + "=1 to run it (scripts/test.sh does)")
	}
	stealOnce.Do(tolerateSteal)
}

// StealLimitEnv is analyze.StealLimitEnv (testenv imports nothing of the
// project; analyze's tests check the two agree).
const StealLimitEnv = "BENCHNET_MAX_STEAL_PCT"

// TestStealPct is the steal limit integration tests run under, unless the
// environment already sets one.
const TestStealPct = "25"

var stealOnce sync.Once

// tolerateSteal sets the limit process-wide, once: os.Setenv rather than
// t.Setenv, which panics in parallel tests, and commands started with
// os.Environ() inherit it.
func tolerateSteal() {
	if os.Getenv(StealLimitEnv) == "" {
		_ = os.Setenv(StealLimitEnv, TestStealPct)
	}
}

// NeedRoot marks t as an integration test (Integration) and skips (fails
// under CI) unless it runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	Integration(t)
	if os.Geteuid() != 0 {
		Skip(t, "needs root: network namespaces, veth and bridges (run the tests as root)")
	}
}

// NeedCommand skips (fails under CI) unless name is on PATH, and returns its path.
func NeedCommand(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, "%s not on PATH: install Debian's %s (`go run ./cmd/benchnet setup --tests` does)", name, pkg)
	}
	return p
}

// NeedFile skips (fails under CI) unless path exists; how tells how to get it.
func NeedFile(t testing.TB, path, how string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Skip(t, "%s missing: %s", path, how)
	}
	return path
}

// SharedFile returns the path of rel inside the project's ../shared folder
// (beside the repository root, found from any package by walking up to
// go.mod), skipping (failing under CI) when it is missing.
func SharedFile(t testing.TB, rel string) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		Skip(t, "shared file %s: %v", rel, err)
		return ""
	}
	p := filepath.Join(filepath.Dir(root), "shared", rel)
	if _, err := os.Stat(p); err != nil {
		Skip(t, "shared file %s not available: %v (it lives in ../shared beside the repository)", rel, err)
	}
	return p
}

// ModuleRoot is the directory holding the module's go.mod, found by walking
// up from the working directory (a test's is its package directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
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
