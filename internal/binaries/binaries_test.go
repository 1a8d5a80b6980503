package binaries

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/release"
)

var v101 = release.Release{Name: "cometbft", Version: "v1.0.1"}

// setup points the cache at a temp dir and returns it. Any stray call of the
// real go command would fail loudly, because goCmd points nowhere unless a
// test installs a fake.
func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("BENCHNET_CACHE", dir)
	old := goCmd
	goCmd = filepath.Join(dir, "no-go-here")
	t.Cleanup(func() { goCmd = old })
	return dir
}

// realGo lets `go version -m` run for real (it is fast); go install must not.
func realGo(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command not on PATH (go test runs from it): %v", err)
	}
	return p
}

// placeGoBinary copies this test binary (a real Go binary with build info)
// to path, standing in for a release binary.
func placeGoBinary(t *testing.T, path string) []byte {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDir(t *testing.T) {
	tests := []struct {
		cache, xdg, want string
	}{
		{"/c", "/x", "/c/bin"},
		{"", "/x", "/x/benchnet/bin"},
	}
	for _, tt := range tests {
		t.Setenv("BENCHNET_CACHE", tt.cache)
		t.Setenv("XDG_CACHE_HOME", tt.xdg)
		if got := Dir(); got != tt.want {
			t.Errorf("BENCHNET_CACHE=%q XDG_CACHE_HOME=%q: Dir() = %q, want %q", tt.cache, tt.xdg, got, tt.want)
		}
	}
	t.Setenv("BENCHNET_CACHE", "/c")
	if got, want := Path(v101, "abci-cli"), "/c/bin/cometbft@v1.0.1/abci-cli"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestEnsureRejects(t *testing.T) {
	setup(t)
	tests := []struct {
		rel     release.Release
		tool    string
		wantErr string
	}{
		{release.Release{Name: "gaia", Version: "v1.0.0"}, "cometbft", "no known Go module for release gaia@v1.0.0"},
		{v101, "tm-bench", `has no tool "tm-bench"`},
		{release.Release{Name: "cometbft", Version: "latest"}, "cometbft", "pinned"},
	}
	for _, tt := range tests {
		_, err := Ensure(context.Background(), tt.rel, tt.tool, nil)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Ensure(%s, %s) error = %v, want it to contain %q", tt.rel, tt.tool, err, tt.wantErr)
		}
	}
}

func TestEnsureReusesCachedBinary(t *testing.T) {
	setup(t) // goCmd points nowhere: any build or go version -m would fail
	bin := Path(v101, "cometbft")
	placeGoBinary(t, bin)
	if err := os.WriteFile(ProvenancePath(bin), []byte("recorded earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	got, err := Ensure(context.Background(), v101, "cometbft", &log)
	if err != nil {
		t.Fatal(err)
	}
	if got != bin {
		t.Errorf("Ensure = %q, want %q", got, bin)
	}
	if log.Len() != 0 {
		t.Errorf("reuse logged %q, want nothing", log.String())
	}
	prov, err := Provenance(bin)
	if err != nil || prov != "recorded earlier\n" {
		t.Errorf("Provenance = %q, %v; want the recorded file", prov, err)
	}
}

func TestEnsureAdoptsBinaryWithoutProvenance(t *testing.T) {
	setup(t)
	goCmd = realGo(t)
	bin := Path(v101, "cometbft")
	want := placeGoBinary(t, bin)
	var log bytes.Buffer
	got, err := Ensure(context.Background(), v101, "cometbft", &log)
	if err != nil {
		t.Fatal(err)
	}
	if got != bin {
		t.Errorf("Ensure = %q, want %q", got, bin)
	}
	if !strings.Contains(log.String(), "adopting") {
		t.Errorf("log %q does not say it adopted the binary", log.String())
	}
	if data, _ := os.ReadFile(bin); !bytes.Equal(data, want) {
		t.Error("adopting changed the binary")
	}
	prov, err := os.ReadFile(ProvenancePath(bin))
	if err != nil {
		t.Fatal(err)
	}
	// go version -m of this test binary names its main package.
	if !strings.Contains(string(prov), "github.com/benchnet/benchnet/internal/binaries.test") {
		t.Errorf("provenance does not look like go version -m output:\n%s", prov)
	}
}

func TestEnsureWaitsForLock(t *testing.T) {
	setup(t)
	goCmd = realGo(t)
	old := lockPoll
	lockPoll = 10 * time.Millisecond
	t.Cleanup(func() { lockPoll = old })

	bin := Path(v101, "cometbft")
	placeGoBinary(t, bin)
	f, err := os.OpenFile(filepath.Join(filepath.Dir(bin), ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	// A cancelled wait gives up with the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Ensure(ctx, v101, "cometbft", nil); err == nil || !strings.Contains(err.Error(), "wait for build lock") {
		t.Fatalf("Ensure under a held lock with a short deadline: err = %v, want a lock-wait error", err)
	}

	var log bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := Ensure(context.Background(), v101, "cometbft", &log)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Ensure returned (%v) while another process held the lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(ProvenancePath(bin)); err == nil {
		t.Fatal("provenance written while the lock was held")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ensure still blocked after the lock was released")
	}
	if !strings.Contains(log.String(), "waiting for another benchnet") {
		t.Errorf("log %q does not say it waited", log.String())
	}
	if _, err := os.Stat(ProvenancePath(bin)); err != nil {
		t.Errorf("no provenance after adoption: %v", err)
	}
}

// fakeGo writes a stand-in go command: `install` records its environment and
// arguments, prints some package lines, and then either drops a real Go
// binary into $GOBIN or fails; `version` runs the real go.
func fakeGo(t *testing.T, dir, binName string, fail bool, sleep string) (script, record string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record = filepath.Join(dir, "install.env")
	install := fmt.Sprintf(`cp %q "$GOBIN/%s"`, self, binName)
	if fail {
		install = `echo "cannot find module providing package" >&2; exit 1`
	}
	body := fmt.Sprintf(`#!/bin/sh
if [ "$1" = version ]; then exec %q "$@"; fi
echo "args=$*" > %q
echo "GOBIN=$GOBIN" >> %q
echo "CGO_ENABLED=$CGO_ENABLED" >> %q
i=0; while [ $i -lt 30 ]; do echo "example.com/pkg$i"; i=$((i+1)); done
sleep %s
%s
`, realGo(t), record, record, record, sleep, install)
	script = filepath.Join(dir, "fake-go")
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, record
}

func TestEnsureBuilds(t *testing.T) {
	tests := []struct {
		tool, built, pkg string
	}{
		{"cometbft", "cometbft", "github.com/cometbft/cometbft/cmd/cometbft"},
		{"abci-cli", "abci-cli", "github.com/cometbft/cometbft/abci/cmd/abci-cli"},
		{"loadtime-load", "load", "github.com/cometbft/cometbft/test/loadtime/cmd/load"},
		{"loadtime-report", "report", "github.com/cometbft/cometbft/test/loadtime/cmd/report"},
	}
	oldTick := progressInterval
	progressInterval = 50 * time.Millisecond
	t.Cleanup(func() { progressInterval = oldTick })
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			dir := setup(t)
			var record string
			goCmd, record = fakeGo(t, dir, tt.built, false, "0.3")
			var log bytes.Buffer
			bin, err := Ensure(context.Background(), v101, tt.tool, &log)
			if err != nil {
				t.Fatal(err)
			}
			if want := Path(v101, tt.tool); bin != want {
				t.Errorf("Ensure = %q, want %q", bin, want)
			}
			if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("binary not in place and executable: %v", err)
			}
			prov, err := os.ReadFile(ProvenancePath(bin))
			if err != nil || !strings.Contains(string(prov), "binaries.test") {
				t.Errorf("provenance = %q, %v", prov, err)
			}
			env, _ := os.ReadFile(record)
			for _, want := range []string{
				"args=install -v " + tt.pkg + "@v1.0.1",
				"GOBIN=" + filepath.Dir(bin) + "/.build-",
				"CGO_ENABLED=0",
			} {
				if !strings.Contains(string(env), want) {
					t.Errorf("go install ran with\n%s\nwant it to contain %q", env, want)
				}
			}
			logs := log.String()
			for _, want := range []string{
				"building cometbft@v1.0.1 " + tt.tool + " (go install " + tt.pkg + "@v1.0.1), usually 2-3 min",
				"elapsed, example.com/pkg29",
				"built cometbft@v1.0.1 " + tt.tool,
			} {
				if !strings.Contains(logs, want) {
					t.Errorf("log\n%s\nwant it to contain %q", logs, want)
				}
			}
			// The temporary GOBIN is gone.
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(bin), ".build-*")); len(m) != 0 {
				t.Errorf("left behind %v", m)
			}
		})
	}
}

func TestEnsureBuildFailureCarriesOutputTail(t *testing.T) {
	dir := setup(t)
	goCmd, _ = fakeGo(t, dir, "cometbft", true, "0")
	_, err := Ensure(context.Background(), v101, "cometbft", nil)
	if err == nil {
		t.Fatal("Ensure succeeded with a failing go install")
	}
	msg := err.Error()
	for _, want := range []string{"go install github.com/cometbft/cometbft/cmd/cometbft@v1.0.1", "cannot find module providing package", "example.com/pkg29"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	// Only the tail: the first package lines scrolled away.
	if strings.Contains(msg, "example.com/pkg5\n") {
		t.Errorf("error carries the whole output, want the last 20 lines: %q", msg)
	}
	if _, err := os.Stat(Path(v101, "cometbft")); err == nil {
		t.Error("a failed build left a binary in the cache")
	}
}
