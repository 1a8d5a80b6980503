// Package release is the one grammar of release references — what a
// manifest's `release =`, `benchnet build REF` and `benchnet qa
// --baseline/--candidate` accept — and their resolution into a Release, the
// build identity the rest of benchnet keys plans, caches, provenance and
// reports on.
//
//	cometbft@v1.0.1, cometbft@v1.0.0-alpha.2   a module tag (Kind Tag)
//	tendermint@v0.34.22                        Tendermint Core's module
//	cometbft@4ced46d3, cometbft@main           a commit or branch, via the proxy (Kind Commit)
//	./cometbft, /src/fork, path:../x           a local source tree (Kind Tree)
//	file:/path/to/cometbft                     a prebuilt binary (Kind File)
//
// Parse is pure syntax; Resolve does the IO (proxy look-up, tree hashing,
// binary probing) and is what callers run before anything is built.
package release

import (
	"fmt"
	"regexp"
	"strings"
)

// Release names a node binary: its flavour and a version that is unique per
// build identity. It is comparable (maps key on it) and String is what
// caches, provenance files and reports are named by.
//
// For a module build Version is the tag or pseudo-version and Source is
// empty. For a local tree or binary Version is the release the code says it
// is, with semver build metadata naming the build ("v1.0.1+tree.<hash>",
// "v1.0.1+file.<sha256>") and Source is "tree:/abs/dir" or "file:/abs/path".
type Release struct {
	Name    string `json:"name"`    // flavour: "cometbft", "tendermint" or "gossipsub"
	Version string `json:"version"` // "v1.0.1", "v1.0.1+tree.3f2a…"
	Source  string `json:"source,omitempty"`
}

func (r Release) String() string { return r.Name + "@" + r.Version }

// Local reports whether the release is built from (or is) a local path
// rather than fetched from the module proxy.
func (r Release) Local() bool { return r.Source != "" }

// Tree returns the source directory of a tree release ("" otherwise).
func (r Release) Tree() string { return after(r.Source, "tree:") }

// File returns the path of a file release ("" otherwise).
func (r Release) File() string { return after(r.Source, "file:") }

func after(s, prefix string) string {
	if v, ok := strings.CutPrefix(s, prefix); ok {
		return v
	}
	return ""
}

// BaseVersion is Version without build metadata: the release line the code
// claims ("v1.0.1" for "v1.0.1+tree.3f2a…").
func (r Release) BaseVersion() string { v, _, _ := strings.Cut(r.Version, "+"); return v }

// Kind is the shape of a reference.
type Kind string

const (
	Tag    Kind = "tag"    // name@vX.Y.Z[-pre]
	Commit Kind = "commit" // name@<commit or branch>
	Tree   Kind = "tree"   // a local source tree
	File   Kind = "file"   // a prebuilt binary
)

// Modules maps a reference's name to its Go module.
var Modules = map[string]string{
	"cometbft":   "github.com/cometbft/cometbft",
	"tendermint": "github.com/tendermint/tendermint",
}

// Ref is a parsed reference, before any IO.
type Ref struct {
	Raw  string // as written
	Kind Kind
	// Name and Version for Tag and Commit: "cometbft", "v1.0.1" / "4ced46d3".
	Name, Version string
	// Path for Tree and File, as written (relative paths are relative to
	// the manifest's directory, or the working directory for flags).
	Path string
}

func (r Ref) String() string { return r.Raw }

// Module is the Go module of a Tag or Commit reference.
func (r Ref) Module() string { return Modules[r.Name] }

var (
	semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)
	// A git revision: a commit hash prefix or a branch name.
	revRE  = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._/-]{0,99}$`)
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// Grammar is a one-line summary for error messages.
const Grammar = `want NAME@vX.Y.Z (cometbft@v1.0.1), NAME@COMMIT, a source tree (./dir, /abs/dir, path:dir) or file:/path/to/binary`

// Parse reads a reference. It checks syntax only: that a tag exists, a
// tree builds or a binary runs is Resolve's job.
func Parse(s string) (Ref, error) {
	ref := Ref{Raw: s}
	switch {
	case s == "":
		return ref, fmt.Errorf("empty release reference: %s", Grammar)
	case strings.TrimSpace(s) != s:
		return ref, fmt.Errorf("%q has surrounding spaces", s)
	case strings.HasPrefix(s, "file:"):
		ref.Kind, ref.Path = File, strings.TrimPrefix(s, "file:")
		if ref.Path == "" {
			return ref, fmt.Errorf("%q: file: needs a path to a binary", s)
		}
		return ref, nil
	case strings.HasPrefix(s, "path:"):
		ref.Kind, ref.Path = Tree, strings.TrimPrefix(s, "path:")
		if ref.Path == "" {
			return ref, fmt.Errorf("%q: path: needs a directory", s)
		}
		return ref, nil
	case s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/"):
		ref.Kind, ref.Path = Tree, s
		return ref, nil
	}
	name, version, ok := strings.Cut(s, "@")
	if !ok {
		return ref, fmt.Errorf("%q: %s", s, Grammar)
	}
	if !nameRE.MatchString(name) {
		return ref, fmt.Errorf("%q: %s", s, Grammar)
	}
	if _, known := Modules[name]; !known {
		return ref, fmt.Errorf("%q: unknown module name %q (known: %s)", s, name, knownNames())
	}
	ref.Name, ref.Version = name, version
	switch {
	case semverRE.MatchString(version):
		ref.Kind = Tag
	case version == "latest" || version == "upgrade" || version == "patch" || strings.HasPrefix(version, "<") || strings.HasPrefix(version, ">"):
		return ref, fmt.Errorf("%q: releases are pinned; %q is a query, not a version (e.g. %s@v1.0.1)", s, version, name)
	case looksVersion(version):
		return ref, fmt.Errorf("%q: %q is not a full version: want vMAJOR.MINOR.PATCH[-PRERELEASE]", s, version)
	case revRE.MatchString(version) && !strings.Contains(version, ".."):
		ref.Kind = Commit
	default:
		return ref, fmt.Errorf("%q: %s", s, Grammar)
	}
	return ref, nil
}

// looksVersion: "v1", "v1.0", "1.0.1" are typos of versions, not branch
// names ("v0.38.x" and "v1.x" are CometBFT's release branches).
var looksVersionRE = regexp.MustCompile(`^v\d+(\.\d+)?$|^\d+\.\d+(\.\d+)?(-[0-9A-Za-z.-]+)?$`)

func looksVersion(v string) bool { return looksVersionRE.MatchString(v) }

func knownNames() string {
	return "cometbft, tendermint"
}

// MustTag returns the Release of a tag reference known to be valid (tests,
// built-in lists).
func MustTag(s string) Release {
	ref, err := Parse(s)
	if err != nil || ref.Kind != Tag {
		panic(fmt.Sprintf("release.MustTag(%q): %v", s, err))
	}
	return Release{Name: ref.Name, Version: ref.Version}
}
