package release

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

// SourceTree is a local source tree of CometBFT, Tendermint or a fork.
type SourceTree struct {
	Dir     string // absolute
	Module  string // the go.mod's module path
	Flavour string // "cometbft" or "tendermint": the main package's directory
	// Version is what version/version.go says ("v1.0.1"), v0.0.0 if nothing.
	Version string
	// Tools maps benchnet's tool names to the tree's packages ("./cmd/cometbft").
	Tools map[string]string
	// GoWork is the GOWORK the build uses: the tree's go.work, or "off"
	// when it names a module that is not there.
	GoWork     string
	GoWorkNote string
	// ContentHash covers every file Go compiles into the tools from the
	// tree (and its local replacements), plus go.mod/go.sum/go.work.
	ContentHash string
	// Files is how many files ContentHash covers.
	Files int
	// GoVersion is the toolchain that will build it.
	GoVersion string
}

// BuildEnv is the environment of every go command run on the tree.
func (t *SourceTree) BuildEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOWORK="+t.GoWork, "GOFLAGS=-trimpath -buildvcs=false")
}

// BuildFlags is how a tree's tool is built, recorded in provenance.
const BuildFlags = "go build -trimpath -buildvcs=false, CGO_ENABLED=0"

// toolDirs are the packages of a tag's tools, relative to the module root;
// the node's own is cmd/<flavour>.
var toolDirs = map[string]string{
	"abci-cli":        "abci/cmd/abci-cli",
	"loadtime-load":   "test/loadtime/cmd/load",
	"loadtime-report": "test/loadtime/cmd/report",
}

var (
	moduleRE = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?`)
	// version/version.go: CometBFT's CMTSemVer (v1), TMCoreSemVer (v0.38),
	// Tendermint's TMVersionDefault (v0.34).
	semverTag = regexp.MustCompile(`(?m)^\s*(?:var\s+|const\s+)?(?:CMTSemVer|TMCoreSemVer|TMSemVer|TMVersionDefault)\s*=\s*"v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?)"`)
)

// InspectTree checks that dir is a Go module holding a cometbft or
// tendermint main package, decides GOWORK, and hashes its content.
func InspectTree(ctx context.Context, dir string) (*SourceTree, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("source tree %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("source tree %s is not a directory (a prebuilt binary is file:%s)", dir, dir)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a Go module (no go.mod): want a checkout of CometBFT, Tendermint or a fork", dir)
	}
	m := moduleRE.FindSubmatch(gomod)
	if m == nil {
		return nil, fmt.Errorf("%s/go.mod declares no module", dir)
	}
	t := &SourceTree{Dir: dir, Module: string(m[1]), Tools: map[string]string{}}
	for _, fl := range []string{"cometbft", "tendermint"} {
		if isMainPackage(filepath.Join(dir, "cmd", fl)) {
			t.Flavour = fl
			t.Tools["cometbft"] = "./cmd/" + fl
			break
		}
	}
	if t.Flavour == "" {
		return nil, fmt.Errorf("%s is a Go module (%s) but holds no cometbft or tendermint main package (cmd/cometbft or cmd/tendermint)", dir, t.Module)
	}
	for tool, d := range toolDirs {
		if isMainPackage(filepath.Join(dir, d)) {
			t.Tools[tool] = "./" + d
		}
	}
	t.Version = "v0.0.0"
	if b, err := os.ReadFile(filepath.Join(dir, "version", "version.go")); err == nil {
		if v := semverTag.FindSubmatch(b); v != nil {
			t.Version = "v" + string(v[1])
		}
	}
	t.GoWork, t.GoWorkNote = goWork(dir)
	gv, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOVERSION: %w", err)
	}
	t.GoVersion = strings.TrimSpace(string(gv))
	if err := t.hash(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// isMainPackage: dir has a non-test .go file declaring package main.
func isMainPackage(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "package ") {
				f.Close()
				if strings.TrimSpace(strings.TrimPrefix(l, "package ")) == "main" {
					return true
				}
				break
			}
		}
		f.Close()
	}
	return false
}

// goWork returns the GOWORK for the tree: its go.work when every module it
// uses exists, "off" otherwise. A copy of CometBFT v1.0.1's module zip has
// a go.work naming ./api without that directory; go build fails on it.
func goWork(dir string) (gowork, note string) {
	path := filepath.Join(dir, "go.work")
	b, err := os.ReadFile(path)
	if err != nil {
		return "off", ""
	}
	var missing []string
	for _, u := range workUses(b) {
		if _, err := os.Stat(filepath.Join(dir, u, "go.mod")); err != nil {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		return "off", fmt.Sprintf("go.work set aside (GOWORK=off): it uses %s, which is not in the tree", strings.Join(missing, ", "))
	}
	return path, "go.work used"
}

// workUses lists the directories of a go.work's use directives.
func workUses(b []byte) []string {
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.TrimSpace(line)
		if i := strings.Index(l, "//"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		switch {
		case in && l == ")":
			in = false
		case in && l != "":
			out = append(out, strings.Trim(l, `"`))
		case l == "use (":
			in = true
		case strings.HasPrefix(l, "use "):
			out = append(out, strings.Trim(strings.TrimSpace(strings.TrimPrefix(l, "use ")), `"`))
		}
	}
	return out
}

// listedPkg is the part of `go list -deps -json` the hash needs.
type listedPkg struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct {
		Path, Dir, GoMod string
		Main             bool
	}
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles, SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles []string
	Error                                                                                                               *struct{ Err string }
}

// hash sets ContentHash: sha256 over (path, sha256) of every file Go would
// compile into the tools from outside the module cache (the tree's own
// packages and local replacements), and every such module's go.mod and
// go.sum (which pin everything from the cache), and the go.work in use.
// Mtimes play no part; a README or a _test.go changes nothing.
func (t *SourceTree) hash(ctx context.Context) error {
	modcache, _ := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE").Output()
	mc := strings.TrimSpace(string(modcache))
	var pkgs []string
	for _, p := range t.Tools {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(lctx, goCmd, append([]string{"list", "-deps", "-json"}, pkgs...)...)
	cmd.Dir, cmd.Env = t.Dir, t.BuildEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: go list -deps %s (GOWORK=%s): %w: %s", t.Dir, strings.Join(pkgs, " "), t.GoWork, err, strings.TrimSpace(stderr.String()))
	}
	files := map[string]bool{}
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: decode go list: %w", t.Dir, err)
		}
		if p.Error != nil {
			return fmt.Errorf("%s: package %s: %s", t.Dir, p.ImportPath, p.Error.Err)
		}
		if p.Standard || (mc != "" && strings.HasPrefix(p.Dir, mc+string(filepath.Separator))) {
			continue
		}
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles, p.SFiles, p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range list {
				files[filepath.Join(p.Dir, f)] = true
			}
		}
		if p.Module != nil && p.Module.GoMod != "" && !strings.HasPrefix(p.Module.GoMod, mc+string(filepath.Separator)) {
			files[p.Module.GoMod] = true
			if sum := filepath.Join(filepath.Dir(p.Module.GoMod), "go.sum"); fileExists(sum) {
				files[sum] = true
			}
		}
	}
	files[filepath.Join(t.Dir, "go.mod")] = true
	if sum := filepath.Join(t.Dir, "go.sum"); fileExists(sum) {
		files[sum] = true
	}
	if t.GoWork != "off" {
		files[t.GoWork] = true
		if sum := t.GoWork + ".sum"; fileExists(sum) {
			files[sum] = true
		}
	}
	sum, err := hashFiles(t.Dir, files)
	if err != nil {
		return err
	}
	t.ContentHash, t.Files = sum, len(files)
	return nil
}

// hashFiles hashes (name relative to root, content hash) pairs in name order.
func hashFiles(root string, files map[string]bool) (string, error) {
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, f := range names {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", f, err)
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			rel = f
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s\x00%x\n", filepath.ToSlash(rel), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Key is the tree's cache identity: its location, content and toolchain.
// Two trees never share it, even with equal content.
func (t *SourceTree) Key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s/%s\n%s\n", t.Dir, t.ContentHash, t.GoVersion, runtime.GOOS, runtime.GOARCH, BuildFlags)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Git is a tree's VCS state, when it is a git work tree.
type Git struct {
	Revision string
	Dirty    bool
	// DiffSHA256 hashes `git diff HEAD --binary` (tracked changes) and the
	// names and content of untracked files.
	DiffSHA256 string
}

// GitState reads the tree's git state; ok is false outside a repository.
func GitState(ctx context.Context, dir string) (g Git, ok bool, err error) {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return g, false, nil // not a repository, or no commit yet
	}
	g.Revision = strings.TrimSpace(string(rev))
	status, err := git("status", "--porcelain", "--untracked-files=all", "--", ".")
	if err != nil {
		return g, true, err
	}
	if len(bytes.TrimSpace(status)) == 0 {
		return g, true, nil
	}
	g.Dirty = true
	diff, err := git("diff", "HEAD", "--binary", "--", ".")
	if err != nil {
		return g, true, err
	}
	h := sha256.New()
	h.Write(diff)
	untracked, err := git("ls-files", "--others", "--exclude-standard", "-z", "--", ".")
	if err != nil {
		return g, true, err
	}
	for _, f := range strings.Split(string(untracked), "\x00") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue // a directory or a file gone since
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "untracked %s %x\n", f, sum)
	}
	g.DiffSHA256 = hex.EncodeToString(h.Sum(nil))
	return g, true, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func resolveTree(ctx context.Context, ref Ref, dir string) (*Resolved, error) {
	t, err := InspectTree(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref.Raw, err)
	}
	rel := Release{Name: t.Flavour, Version: t.Version + "+tree." + t.Key(), Source: "tree:" + t.Dir}
	lines := []string{
		"reference: " + ref.Raw,
		"kind: tree",
		"dir: " + t.Dir,
		"module: " + t.Module,
		"version: " + t.Version + " (version/version.go)",
	}
	g, inGit, err := GitState(ctx, t.Dir)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref.Raw, err)
	}
	if inGit {
		lines = append(lines, "vcs: git", "vcs.revision: "+g.Revision, fmt.Sprintf("vcs.dirty: %t", g.Dirty))
		if g.Dirty {
			lines = append(lines, "vcs.diff.sha256: "+g.DiffSHA256)
		}
	} else {
		lines = append(lines, "vcs: none (not a git work tree)")
	}
	lines = append(lines,
		fmt.Sprintf("content.sha256: %s (%d files Go compiles, go.mod/go.sum)", t.ContentHash, t.Files),
		"go: "+t.GoVersion,
		"build: "+BuildFlags+", GOWORK="+t.GoWork,
	)
	if t.GoWorkNote != "" {
		lines = append(lines, "go.work: "+t.GoWorkNote)
	}
	return &Resolved{Ref: ref, Release: rel, Module: t.Module, Info: lines, Static: true, Tree: t}, nil
}
