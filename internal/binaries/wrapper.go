package binaries

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/release"
)

// Wrapper describes a release whose tag cannot be built with `go install
// pkg@version`: CometBFT v0.34.x keeps Tendermint's module path
// (github.com/tendermint/tendermint) and has replace directives, so `go
// install github.com/cometbft/cometbft/cmd/cometbft@v0.34.35` is refused, and
// the module proxy here refuses github.com/tendermint/tendermint itself
// (403). A wrapper module requires the old path and replaces it with the
// CometBFT tag; its packages are then built under the old path.
//
// Tendermint Core itself (tendermint@v0.34.x) needs the wrapper for another
// reason: `go install pkg@version` looks the module up for deprecation
// (@v/list), which the proxy here refuses with 403 for
// github.com/tendermint/tendermint, while a module that merely requires the
// version builds. Its wrapper has no replace.
type Wrapper struct {
	// Module is the module path the release's go.mod declares.
	Module string
	// Replace is the module (at the release's version) that supplies it;
	// empty when Module is required as itself.
	Replace string
}

// WrapperFor returns the wrapper a release needs, if any.
func WrapperFor(rel release.Release) (Wrapper, bool) {
	if rel.Name == "cometbft" && strings.HasPrefix(rel.Version, "v0.34.") {
		return Wrapper{Module: "github.com/tendermint/tendermint", Replace: "github.com/cometbft/cometbft"}, true
	}
	if rel.Name == "tendermint" {
		return Wrapper{Module: "github.com/tendermint/tendermint"}, true
	}
	return Wrapper{}, false
}

// pkgFor maps a tool's package to the module path the wrapper builds.
func (w Wrapper) pkgFor(pkg string) string {
	if w.Replace == "" {
		return pkg
	}
	if rest, ok := strings.CutPrefix(pkg, w.Replace); ok {
		return w.Module + rest
	}
	return pkg
}

// GoMod is the wrapper module's go.mod for rel.
func (w Wrapper) GoMod(rel release.Release) string {
	if w.Replace == "" {
		return fmt.Sprintf(`// benchnet's wrapper to build %s: go install %s/...@%s is refused
// when the proxy will not list the module's versions, a required version is not.
module benchnet.local/wrap

go 1.22

require %s %s
`, rel, w.Module, rel.Version, w.Module, rel.Version)
	}
	return fmt.Sprintf(`// benchnet's wrapper to build %s: its go.mod keeps the module path
// %s, so it is required under that path and replaced by the tag.
module benchnet.local/wrap

go 1.22

require %s %s

replace %s => %s %s
`, rel, w.Module, w.Module, rel.Version, w.Module, w.Replace, rel.Version)
}

// buildWrapped builds pkg (under the wrapper's module path) into gobin and
// returns the wrapper's go.mod and go.sum, which go into the provenance.
func buildWrapped(ctx context.Context, rel release.Release, w Wrapper, pkg, gobin string, out io.Writer) (gomod []byte, err error) {
	dir, err := os.MkdirTemp(filepath.Dir(gobin), ".wrap-")
	if err != nil {
		return nil, fmt.Errorf("create wrapper module: %w", err)
	}
	defer os.RemoveAll(dir)
	mod := w.GoMod(rel)
	tools := "//go:build tools\n\n// The package to build, so that go mod tidy resolves its dependencies.\npackage wrap\n\nimport _ \"" + pkg + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(tools), 0o644); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0", "GOFLAGS=-trimpath -mod=mod", "GOWORK=off")
	for _, args := range [][]string{{"mod", "tidy"}, {"install", "-v", pkg}} {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go %s in the wrapper module: %w", strings.Join(args, " "), err)
		}
	}
	return os.ReadFile(filepath.Join(dir, "go.mod"))
}
