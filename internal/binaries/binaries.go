// Package binaries builds release binaries on demand with `go install
// MODULE/cmd@VERSION` into a per-user cache, and records where each came from
// (`go version -m`) beside it. A release is built once and then reused by
// every run, so baselines are just other cache entries.
//
// Layout:
//
//	$BENCHNET_CACHE/bin/<name>@<version>/<tool>                (when BENCHNET_CACHE is set)
//	$XDG_CACHE_HOME/benchnet/bin/<name>@<version>/<tool>       (default ~/.cache/benchnet/bin/…)
//	…/<tool>.provenance.txt                                    `go version -m <tool>`
//	…/.lock                                                    flock held while building
package binaries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchnet/benchnet/internal/release"
)

// Tools maps a tool name to the package `go install` builds for it, per
// release name. test/loadtime is part of the main cometbft module in v0.38.x
// and v1.0.x (checked in the module zips); `go install pkg@version` resolves
// the enclosing module itself, so it would also work if it became its own
// module with matching tags.
var Tools = map[string]map[string]string{
	"cometbft": {
		"cometbft":        "github.com/cometbft/cometbft/cmd/cometbft",
		"abci-cli":        "github.com/cometbft/cometbft/abci/cmd/abci-cli",
		"loadtime-load":   "github.com/cometbft/cometbft/test/loadtime/cmd/load",
		"loadtime-report": "github.com/cometbft/cometbft/test/loadtime/cmd/report",
	},
	// Tendermint Core v0.34.x (up to v0.34.24; later v0.34 releases are
	// CometBFT's). The node's tool keeps the logical name "cometbft" so that
	// callers ask for "the node binary" whatever the flavour; the file in the
	// cache is named after the tool too. test/loadtime is in the v0.34.22
	// module zip (test/loadtime/cmd/{load,report}, no go.mod of its own).
	"tendermint": {
		"cometbft":        "github.com/tendermint/tendermint/cmd/tendermint",
		"abci-cli":        "github.com/tendermint/tendermint/abci/cmd/abci-cli",
		"loadtime-load":   "github.com/tendermint/tendermint/test/loadtime/cmd/load",
		"loadtime-report": "github.com/tendermint/tendermint/test/loadtime/cmd/report",
	},
}

// Knobs replaced by tests.
var (
	goCmd            = "go"
	progressInterval = 10 * time.Second
	lockPoll         = 200 * time.Millisecond
)

// Dir is the cache root holding one directory per release.
func Dir() string { return filepath.Join(release.CacheRoot(), "bin") }

// Path is where tool of rel lives in the cache, built or not.
func Path(rel release.Release, tool string) string {
	return filepath.Join(Dir(), rel.String(), tool)
}

// ProvenancePath is the provenance file beside a binary.
func ProvenancePath(bin string) string { return bin + ".provenance.txt" }

// Package returns the Go package that builds tool for rel.
func Package(rel release.Release, tool string) (string, error) {
	tools, ok := Tools[rel.Name]
	if !ok {
		return "", fmt.Errorf("no known Go module for release %s", rel)
	}
	pkg, ok := tools[tool]
	if !ok {
		return "", fmt.Errorf("release %s has no tool %q (known: cometbft, abci-cli, loadtime-load, loadtime-report)", rel, tool)
	}
	if w, ok := WrapperFor(rel); ok {
		return w.pkgFor(pkg), nil // wrapper.go
	}
	return pkg, nil
}

// Ensure returns the path of tool for rel, building it when the cache does
// not hold it. A binary without a provenance file (placed by hand or by a
// plain go install) is adopted: its provenance is recorded, it is not rebuilt.
// Progress goes to log.
func Ensure(ctx context.Context, rel release.Release, tool string, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	if rel.Local() {
		return ensureLocal(ctx, rel, tool, log) // local.go
	}
	pkg, err := Package(rel, tool)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rel.Version, "v") || strings.ContainsAny(rel.Version, "/@ ") {
		return "", fmt.Errorf("release %s: version must be a pinned vMAJOR.MINOR.PATCH", rel)
	}
	bin := Path(rel, tool)
	if fileExists(bin) && fileExists(ProvenancePath(bin)) {
		return bin, nil
	}
	unlock, err := lockEntry(ctx, bin, rel, log)
	if err != nil {
		return "", err
	}
	defer unlock()

	// Another process may have finished while we waited for the lock.
	if fileExists(bin) {
		if !fileExists(ProvenancePath(bin)) {
			fmt.Fprintf(log, "adopting existing %s (no provenance yet)\n", bin)
			if err := writeProvenance(ctx, bin); err != nil {
				return "", err
			}
		}
		return bin, nil
	}
	if err := build(ctx, rel, tool, pkg, bin, log); err != nil {
		return "", err
	}
	return bin, nil
}

// Provenance returns the recorded `go version -m` of bin, running it when no
// provenance file is beside the binary.
func Provenance(bin string) (string, error) {
	if b, err := os.ReadFile(ProvenancePath(bin)); err == nil {
		return string(b), nil
	}
	out, err := exec.Command(goCmd, "version", "-m", bin).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go version -m %s: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func writeProvenance(ctx context.Context, bin string) error {
	out, err := exec.CommandContext(ctx, goCmd, "version", "-m", bin).CombinedOutput()
	if err != nil {
		return fmt.Errorf("record provenance of %s: go version -m: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return writeAtomic(ProvenancePath(bin), out)
}

// build runs go install into a temp GOBIN inside the release dir and renames
// the result into place, so a half-written binary is never visible.
func build(ctx context.Context, rel release.Release, tool, pkg, bin string, log io.Writer) error {
	dir := filepath.Dir(bin)
	gobin, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return fmt.Errorf("create build dir: %w", err)
	}
	defer os.RemoveAll(gobin)

	target := pkg + "@" + rel.Version
	out := &tailBuffer{max: 20}
	done := make(chan error, 1)
	w, wrapped := WrapperFor(rel)
	var wrapMod []byte
	start := time.Now()
	if wrapped {
		target = pkg + " (wrapper module: " + w.Module + " => " + w.Replace + " " + rel.Version + ")"
		if w.Replace == "" {
			target = pkg + " (wrapper module requiring " + w.Module + " " + rel.Version + ")"
		}
		fmt.Fprintf(log, "building %s %s (go install %s), usually 2-3 min\n", rel, tool, target)
		go func() {
			var err error
			wrapMod, err = buildWrapped(ctx, rel, w, pkg, gobin, out)
			done <- err
		}()
	} else {
		fmt.Fprintf(log, "building %s %s (go install %s), usually 2-3 min\n", rel, tool, target)
		cmd := exec.CommandContext(ctx, goCmd, "install", "-v", target)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0", "GOFLAGS=-trimpath")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start go install %s: %w", target, err)
		}
		go func() { done <- cmd.Wait() }()
	}
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			fmt.Fprintf(log, "  building %s %s: %s elapsed, %s\n", rel, tool, time.Since(start).Round(time.Second), out.last())
			continue
		case err = <-done:
		}
		break
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("build %s %s: %w", rel, tool, ctx.Err())
		}
		return fmt.Errorf("build %s %s: go install %s: %w; last output:\n%s", rel, tool, target, err, out.String())
	}
	built := filepath.Join(gobin, filepath.Base(pkg))
	if !fileExists(built) {
		return fmt.Errorf("build %s %s: go install %s succeeded but wrote no %s", rel, tool, target, filepath.Base(pkg))
	}
	// Provenance first, then the binary: a binary in place always has one.
	prov, err := exec.CommandContext(ctx, goCmd, "version", "-m", built).CombinedOutput()
	if err != nil {
		return fmt.Errorf("record provenance of %s: go version -m: %w: %s", built, err, strings.TrimSpace(string(prov)))
	}
	if wrapped {
		// go version -m shows the replace (=>); the wrapper says why.
		prov = append(prov, "\n# built through a wrapper module, go.mod after go mod tidy:\n"...)
		prov = append(prov, wrapMod...)
	}
	if err := writeAtomic(ProvenancePath(bin), prov); err != nil {
		return err
	}
	if err := os.Rename(built, bin); err != nil {
		return fmt.Errorf("move %s into the cache: %w", tool, err)
	}
	fmt.Fprintf(log, "built %s %s in %s: %s\n", rel, tool, time.Since(start).Round(time.Second), bin)
	return nil
}

// lockEntry creates bin's cache directory and takes its build lock: one
// builder per cache entry, whatever the kind of release.
func lockEntry(ctx context.Context, bin string, rel release.Release, log io.Writer) (unlock func(), err error) {
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache dir: %w", err)
	}
	return lock(ctx, filepath.Join(dir, ".lock"), rel, log)
}

// lock takes an exclusive flock on path, polling so ctx can cancel the wait.
func lock(ctx context.Context, path string, rel release.Release, log io.Writer) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	said := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(log, "waiting for another benchnet building %s (lock %s)\n", rel, path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for build lock of %s: %w", rel, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// Cached reports whether tool of rel is in the cache with its provenance
// (Ensure would return it without building).
func Cached(rel release.Release, tool string) bool {
	bin := Path(rel, tool)
	return fileExists(bin) && fileExists(ProvenancePath(bin))
}
