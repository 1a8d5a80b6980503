package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Resolved is a reference after its IO checks: the Release every later
// step uses, and what provenance records about where it came from.
type Resolved struct {
	Ref     Ref
	Release Release
	// Module is the Go module path ("github.com/cometbft/cometbft", or a
	// fork's own).
	Module string
	// Info is provenance, "key: value" lines in a fixed order (reference,
	// kind, module, version or vcs.revision, dirty, diff hash, …).
	Info []string
	// Static is false for a file: binary that needs a dynamic loader (the
	// docker and swarm runners refuse it). Built releases are static.
	Static bool
	// Tree is set for a source tree: what the build needs.
	Tree *SourceTree
}

// Knobs replaced by tests.
var (
	goCmd       = "go"
	negativeTTL = time.Hour
)

// CacheRoot is benchnet's per-user cache: $BENCHNET_CACHE, else
// $XDG_CACHE_HOME/benchnet, else ~/.cache/benchnet. Binaries live under
// bin/, proxy look-ups under refs/.
func CacheRoot() string {
	if d := os.Getenv("BENCHNET_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".cache")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "benchnet")
}

// Resolve parses s and checks it against the world: a tag or commit on the
// module proxy (one look-up, cached on disk), a tree that is a Go module
// holding a cometbft or tendermint main package (and its content hash), a
// binary that is executable and answers `version`. baseDir anchors relative
// paths (the manifest's directory, or the working directory for flags).
// Nothing is built.
func Resolve(ctx context.Context, s, baseDir string) (*Resolved, error) {
	ref, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return ResolveRef(ctx, ref, baseDir)
}

// ResolveRef is Resolve of a parsed reference.
func ResolveRef(ctx context.Context, ref Ref, baseDir string) (*Resolved, error) {
	switch ref.Kind {
	case Tag:
		return resolveModule(ctx, ref)
	case Commit:
		return resolveModule(ctx, ref)
	case Tree:
		return resolveTree(ctx, ref, abs(baseDir, ref.Path))
	case File:
		return resolveFile(ctx, ref, abs(baseDir, ref.Path))
	}
	return nil, fmt.Errorf("%q: unknown reference kind %q", ref.Raw, ref.Kind)
}

func abs(base, p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		if base == "" {
			base, _ = os.Getwd()
		}
		p = filepath.Join(base, p)
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return filepath.Clean(p)
}

// moduleInfo is what `go list -m -json module@version` prints.
type moduleInfo struct {
	Path, Version, Time string
	Error               *struct{ Err string }
}

// ErrNotAvailable is wrapped when the module proxy refuses a version.
var ErrNotAvailable = errors.New("This module version is not available")

func resolveModule(ctx context.Context, ref Ref) (*Resolved, error) {
	mod := ref.Module()
	info, err := lookup(ctx, mod, ref.Version, ref.Kind == Tag || isHash(ref.Version))
	if err != nil {
		switch {
		case errors.Is(err, ErrNotAvailable) && ref.Kind == Tag:
			return nil, fmt.Errorf("%q: tag %s of %s is not on the module proxy (%q); check the version (e.g. %s@v1.0.1)", ref.Raw, ref.Version, mod, ErrNotAvailable.Error(), ref.Name)
		case errors.Is(err, ErrNotAvailable):
			return nil, fmt.Errorf("%q: the module proxy refuses %s@%s: %q. Check the commit out (git clone https://%s; git checkout %s) and pass the directory instead, e.g. release = \"path:/src/%s\"", ref.Raw, mod, ref.Version, ErrNotAvailable.Error(), mod, ref.Version, ref.Name)
		}
		return nil, fmt.Errorf("%q: %w", ref.Raw, err)
	}
	rel := Release{Name: ref.Name, Version: info.Version}
	lines := []string{
		"reference: " + ref.Raw,
		"kind: " + string(ref.Kind),
		"module: " + mod,
		"version: " + info.Version,
	}
	if info.Time != "" {
		lines = append(lines, "version.time: "+info.Time)
	}
	return &Resolved{Ref: ref, Release: rel, Module: mod, Info: lines, Static: true}, nil
}

var hashRE = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

func isHash(v string) bool { return hashRE.MatchString(v) }

// lookup asks the module proxy for mod@version with `go list -m -json`,
// caching the answer under CacheRoot()/refs: immutable answers (tags,
// commit hashes) for good, refusals for negativeTTL, branches never.
func lookup(ctx context.Context, mod, version string, immutable bool) (*moduleInfo, error) {
	cache := filepath.Join(CacheRoot(), "refs", strings.ReplaceAll(mod, "/", "!")+"@"+strings.ReplaceAll(version, "/", "!")+".json")
	type entry struct {
		Info   *moduleInfo `json:"info,omitempty"`
		Refuse string      `json:"refused,omitempty"`
		When   time.Time   `json:"when"`
	}
	if immutable {
		if b, err := os.ReadFile(cache); err == nil {
			var e entry
			if json.Unmarshal(b, &e) == nil {
				switch {
				case e.Info != nil:
					return e.Info, nil
				case e.Refuse != "" && time.Since(e.When) < negativeTTL:
					return nil, fmt.Errorf("%s@%s: %w (cached %s)", mod, version, ErrNotAvailable, e.When.Format(time.RFC3339))
				}
			}
		}
	}
	save := func(e entry) {
		if !immutable {
			return
		}
		e.When = time.Now().UTC()
		if b, err := json.Marshal(e); err == nil {
			_ = os.MkdirAll(filepath.Dir(cache), 0o755)
			tmp := cache + ".tmp"
			if os.WriteFile(tmp, b, 0o644) == nil {
				_ = os.Rename(tmp, cache)
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, goCmd, "list", "-m", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	if err != nil {
		if strings.Contains(msg, ErrNotAvailable.Error()) || strings.Contains(msg, "unknown revision") || strings.Contains(msg, "404 Not Found") || strings.Contains(msg, "410 Gone") {
			save(entry{Refuse: msg})
			return nil, fmt.Errorf("%s@%s: %w (go list -m: %s)", mod, version, ErrNotAvailable, firstLine(msg))
		}
		return nil, fmt.Errorf("look up %s@%s on the module proxy: go list -m: %w: %s", mod, version, err, msg)
	}
	var info moduleInfo
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return nil, fmt.Errorf("look up %s@%s: decode go list -m: %w", mod, version, err)
	}
	if info.Error != nil {
		return nil, fmt.Errorf("%s@%s: %w (go list -m: %s)", mod, version, ErrNotAvailable, info.Error.Err)
	}
	save(entry{Info: &info})
	return &info, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// FileSHA256 is the hex sha256 of a file's content.
func FileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
