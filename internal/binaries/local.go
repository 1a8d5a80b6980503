package binaries

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/release"
)

// ensureLocal is Ensure for a release from a local source tree (built with
// the machine's Go) or a prebuilt binary (copied in). The cache directory
// is named by the release, whose version carries the tree's key or the
// binary's sha256, so a changed tree or binary is a different entry.
func ensureLocal(ctx context.Context, rel release.Release, tool string, log io.Writer) (string, error) {
	bin := Path(rel, tool)
	if fileExists(bin) && fileExists(ProvenancePath(bin)) {
		return bin, nil
	}
	if rel.File() != "" && tool != "cometbft" {
		return "", fmt.Errorf("release %s is a prebuilt binary (%s): it has no %s; use app = \"kvstore\" (in-process) with file: releases", rel, rel.File(), tool)
	}
	unlock, err := lockEntry(ctx, bin, rel, log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if fileExists(bin) && fileExists(ProvenancePath(bin)) {
		return bin, nil
	}
	if f := rel.File(); f != "" {
		return bin, adoptFile(ctx, rel, f, bin, log)
	}
	return bin, buildTree(ctx, rel, tool, bin, log)
}

// adoptFile copies a prebuilt binary into the cache after checking that it
// is still the one the reference resolved to.
func adoptFile(ctx context.Context, rel release.Release, src, bin string, log io.Writer) error {
	res, err := release.Resolve(ctx, "file:"+src, "")
	if err != nil {
		return err
	}
	if res.Release != rel {
		return fmt.Errorf("%s changed since it was checked (now %s): run again", src, res.Release)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copy %s into the cache: %w", src, err)
	}
	tmp := bin + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return fmt.Errorf("copy %s into the cache: %w", src, err)
	}
	prov := strings.Join(res.Info[1:], "\n") + "\n" // not "reference:": that is per run
	if gv, err := exec.CommandContext(ctx, goCmd, "version", "-m", tmp).Output(); err == nil {
		prov += "\n# go version -m:\n" + strings.ReplaceAll(string(gv), tmp, bin)
	}
	if err := writeAtomic(ProvenancePath(bin), []byte(prov)); err != nil {
		return err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("move %s into the cache: %w", src, err)
	}
	fmt.Fprintf(log, "copied %s into the cache as %s: %s\n", src, rel, bin)
	return nil
}

// buildTree builds tool from a source tree with the machine's Go, the
// tree's own go.mod (and go.work when complete), CGO_ENABLED=0, -trimpath.
func buildTree(ctx context.Context, rel release.Release, tool, bin string, log io.Writer) error {
	dir := rel.Tree()
	res, err := release.Resolve(ctx, "path:"+dir, "")
	if err != nil {
		return err
	}
	if res.Release != rel {
		return fmt.Errorf("source tree %s changed since it was checked (now %s): run again", dir, res.Release)
	}
	t := res.Tree
	pkg, ok := t.Tools[tool]
	if !ok {
		return fmt.Errorf("source tree %s has no %s (looked for %s)", dir, tool, toolHint(tool))
	}
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".build-")
	if err != nil {
		return fmt.Errorf("create build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, tool)
	start := time.Now()
	fmt.Fprintf(log, "building %s %s from %s (go build %s, GOWORK=%s), a first build takes 2-3 min\n", rel, tool, dir, pkg, t.GoWork)
	out := &tailBuffer{max: 20}
	cmd := exec.CommandContext(ctx, goCmd, "build", "-v", "-o", built, pkg)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, t.BuildEnv(), out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start go build %s: %w", pkg, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
wait:
	for {
		select {
		case <-tick.C:
			fmt.Fprintf(log, "  building %s %s: %s elapsed, %s\n", rel, tool, time.Since(start).Round(time.Second), out.last())
		case err = <-done:
			break wait
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("build %s %s: %w", rel, tool, ctx.Err())
		}
		return fmt.Errorf("build %s %s: go build %s in %s: %w; last output:\n%s", rel, tool, pkg, dir, err, out.String())
	}
	sum, err := release.FileSHA256(built)
	if err != nil {
		return err
	}
	prov := strings.Join(res.Info[1:], "\n") + "\n"
	prov += fmt.Sprintf("package: %s\nbuilt: %s in %s\nsha256: %s\n", pkg, time.Now().UTC().Format(time.RFC3339), time.Since(start).Round(time.Second), sum)
	if gv, err := exec.CommandContext(ctx, goCmd, "version", "-m", built).Output(); err == nil {
		prov += "\n# go version -m:\n" + strings.ReplaceAll(string(gv), built, bin)
	}
	if err := writeAtomic(ProvenancePath(bin), []byte(prov)); err != nil {
		return err
	}
	if err := os.Rename(built, bin); err != nil {
		return fmt.Errorf("move %s into the cache: %w", tool, err)
	}
	fmt.Fprintf(log, "built %s %s in %s: %s\n", rel, tool, time.Since(start).Round(time.Second), bin)
	return nil
}

func toolHint(tool string) string {
	switch tool {
	case "abci-cli":
		return "abci/cmd/abci-cli"
	case "loadtime-load":
		return "test/loadtime/cmd/load"
	case "loadtime-report":
		return "test/loadtime/cmd/report"
	}
	return tool
}
