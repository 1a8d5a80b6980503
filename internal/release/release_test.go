package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		kind    Kind
		name    string
		version string
		path    string
		err     string // substring of the error; "" for success
	}{
		{in: "cometbft@v1.0.1", kind: Tag, name: "cometbft", version: "v1.0.1"},
		{in: "cometbft@v1.0.0-alpha.2", kind: Tag, name: "cometbft", version: "v1.0.0-alpha.2"},
		{in: "cometbft@v0.39.4", kind: Tag, name: "cometbft", version: "v0.39.4"},
		{in: "cometbft@v0.40.0", kind: Tag, name: "cometbft", version: "v0.40.0"},
		{in: "tendermint@v0.34.22", kind: Tag, name: "tendermint", version: "v0.34.22"},
		{in: "cometbft@4ced46d3", kind: Commit, name: "cometbft", version: "4ced46d3"},
		{in: "cometbft@main", kind: Commit, name: "cometbft", version: "main"},
		{in: "cometbft@feature/pbts", kind: Commit, name: "cometbft", version: "feature/pbts"},
		{in: "./cometbft", kind: Tree, path: "./cometbft"},
		{in: "../x", kind: Tree, path: "../x"},
		{in: ".", kind: Tree, path: "."},
		{in: "/src/my-fork", kind: Tree, path: "/src/my-fork"},
		{in: "path:../x", kind: Tree, path: "../x"},
		{in: "path:fork", kind: Tree, path: "fork"},
		{in: "file:/usr/local/bin/cometbft", kind: File, path: "/usr/local/bin/cometbft"},
		{in: "file:bin/cometbft", kind: File, path: "bin/cometbft"},

		{in: "", err: "empty release reference"},
		{in: " cometbft@v1.0.1", err: "surrounding spaces"},
		{in: "cometbft", err: "want NAME@vX.Y.Z"},
		{in: "gaia@v1.0.0", err: `unknown module name "gaia"`},
		{in: "CometBFT@v1.0.1", err: "want NAME@vX.Y.Z"},
		{in: "cometbft@latest", err: "pinned"},
		{in: "cometbft@v1.0", err: "not a full version"},
		{in: "cometbft@v0.38.x", kind: Commit, name: "cometbft", version: "v0.38.x"},
		{in: "cometbft@1.0.1", err: "not a full version"},
		{in: "cometbft@v1", err: "not a full version"},
		{in: "cometbft@", err: "want NAME@vX.Y.Z"},
		{in: "cometbft@a..b", err: "want NAME@vX.Y.Z"},
		{in: "file:", err: "needs a path"},
		{in: "path:", err: "needs a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got.Kind != tt.kind || got.Name != tt.name || got.Version != tt.version || got.Path != tt.path || got.Raw != tt.in {
				t.Errorf("Parse(%q) = %+v; want kind %s name %q version %q path %q", tt.in, got, tt.kind, tt.name, tt.version, tt.path)
			}
		})
	}
}

func TestReleaseString(t *testing.T) {
	a := Release{Name: "cometbft", Version: "v1.0.1+tree.0123456789abcdef", Source: "tree:/src/a"}
	if a.String() != "cometbft@v1.0.1+tree.0123456789abcdef" || a.BaseVersion() != "v1.0.1" || a.Tree() != "/src/a" || a.File() != "" || !a.Local() {
		t.Errorf("tree release accessors: %s %s %q %q", a, a.BaseVersion(), a.Tree(), a.File())
	}
	b := MustTag("cometbft@v1.0.1")
	if b.Local() || b.BaseVersion() != "v1.0.1" || b.String() != "cometbft@v1.0.1" {
		t.Errorf("tag release: %+v", b)
	}
}

// miniTree writes a small Go module shaped like a CometBFT checkout: a
// cmd/cometbft main package importing a library package, plus files Go does
// not compile into it.
func miniTree(t *testing.T, module, flavour string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                           "module " + module + "\n\ngo 1.22\n",
		"README.md":                        "# a fork\n",
		"version/version.go":               "package version\n\nconst (\n\tCMTSemVer = \"1.0.1\"\n)\n",
		"cmd/" + flavour + "/main.go":      "package main\n\nimport \"" + module + "/version\"\n\nfunc main() { println(version.CMTSemVer) }\n",
		"cmd/" + flavour + "/main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"abci/cmd/abci-cli/main.go":        "package main\n\nfunc main() {}\n",
		"unused/unused.go":                 "package unused\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTreeHash(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "no go toolchain")
	}
	ctx := context.Background()
	dir := miniTree(t, "example.com/fork", "cometbft")
	base, err := InspectTree(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if base.Flavour != "cometbft" || base.Module != "example.com/fork" || base.Version != "v1.0.1" || base.Tools["cometbft"] != "./cmd/cometbft" || base.Tools["abci-cli"] != "./abci/cmd/abci-cli" {
		t.Fatalf("inspect: %+v", base)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hashNow := func() string {
		t.Helper()
		tr, err := InspectTree(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		return tr.ContentHash
	}
	// Files Go does not compile into the tools leave the hash alone.
	write("README.md", "# a fork, edited\n")
	write("cmd/cometbft/main_test.go", "package main\n\n// edited\n")
	write("unused/unused.go", "package unused\n\nvar X = 1\n")
	if h := hashNow(); h != base.ContentHash {
		t.Errorf("README/_test.go/unimported edit changed the hash: %s -> %s", base.ContentHash, h)
	}
	// A compiled file, go.mod, or a new file in a compiled package change it.
	write("version/version.go", "package version\n\nconst (\n\tCMTSemVer = \"1.0.1\" // edited\n)\n")
	h1 := hashNow()
	if h1 == base.ContentHash {
		t.Errorf("editing a compiled file kept the hash %s", h1)
	}
	write("version/extra.go", "package version\n\nvar Extra = 1\n")
	h2 := hashNow()
	if h2 == h1 {
		t.Errorf("adding a file to a compiled package kept the hash")
	}
	write("go.mod", "module example.com/fork\n\ngo 1.23\n")
	if h3 := hashNow(); h3 == h2 {
		t.Errorf("editing go.mod kept the hash")
	}

	// Equal content in two places: equal content hash, different keys.
	other := miniTree(t, "example.com/fork", "cometbft")
	a, _ := InspectTree(ctx, other)
	b, _ := InspectTree(ctx, miniTree(t, "example.com/fork", "cometbft"))
	if a.ContentHash != b.ContentHash || a.Key() == b.Key() {
		t.Errorf("two equal trees: content %s vs %s (want equal), keys %s vs %s (want different)", a.ContentHash, b.ContentHash, a.Key(), b.Key())
	}
}

func TestInspectTreeFlavourAndRefusals(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "no go toolchain")
	}
	ctx := context.Background()
	tm, err := InspectTree(ctx, miniTree(t, "github.com/tendermint/tendermint", "tendermint"))
	if err != nil {
		t.Fatal(err)
	}
	if tm.Flavour != "tendermint" || tm.Tools["cometbft"] != "./cmd/tendermint" || tm.Version != "v1.0.1" {
		t.Errorf("tendermint tree: %+v", tm)
	}

	noMod := t.TempDir()
	if _, err := InspectTree(ctx, noMod); err == nil || !strings.Contains(err.Error(), "is not a Go module") {
		t.Errorf("dir without go.mod: %v", err)
	}
	noMain := miniTree(t, "example.com/lib", "cometbft")
	if err := os.RemoveAll(filepath.Join(noMain, "cmd")); err != nil {
		t.Fatal(err)
	}
	if _, err := InspectTree(ctx, noMain); err == nil || !strings.Contains(err.Error(), "holds no cometbft or tendermint main package") {
		t.Errorf("module without main package: %v", err)
	}
}

func TestGoWork(t *testing.T) {
	dir := miniTree(t, "example.com/fork", "cometbft")
	if gw, _ := goWork(dir); gw != "off" {
		t.Errorf("no go.work: GOWORK=%s, want off", gw)
	}
	work := "go 1.23.5\n\nuse (\n\t.\n\t./api // the proto module\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
	if gw, note := goWork(dir); gw != "off" || !strings.Contains(note, "./api") {
		t.Errorf("go.work naming a missing ./api: GOWORK=%s (%s), want off", gw, note)
	}
	if err := os.MkdirAll(filepath.Join(dir, "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api", "go.mod"), []byte("module example.com/fork/api\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gw, _ := goWork(dir); gw != filepath.Join(dir, "go.work") {
		t.Errorf("complete go.work: GOWORK=%s, want the tree's", gw)
	}
}

func TestGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Skip(t, "no git")
	}
	ctx := context.Background()
	dir := miniTree(t, "example.com/fork", "cometbft")
	if _, ok, _ := GitState(ctx, dir); ok {
		t.Fatal("a plain directory reported as a git tree")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	g, ok, err := GitState(ctx, dir)
	if err != nil || !ok || g.Dirty || len(g.Revision) != 40 {
		t.Fatalf("clean repo: %+v %v %v", g, ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "version", "version.go"), []byte("package version\n\nconst CMTSemVer = \"9.9.9\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d1, _, _ := GitState(ctx, dir)
	if !d1.Dirty || d1.DiffSHA256 == "" || d1.Revision != g.Revision {
		t.Fatalf("edited repo: %+v", d1)
	}
	if err := os.WriteFile(filepath.Join(dir, "version", "version.go"), []byte("package version\n\nconst CMTSemVer = \"9.9.8\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d2, _, _ := GitState(ctx, dir); d2.DiffSHA256 == d1.DiffSHA256 {
		t.Errorf("a different diff kept the diff hash %s", d2.DiffSHA256)
	}
}

func TestResolveFileRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	noexec := filepath.Join(dir, "cometbft")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\necho 1.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(ctx, "file:cometbft", dir); err == nil || !strings.Contains(err.Error(), "is not executable") {
		t.Errorf("non-executable file: %v", err)
	}
	silent := filepath.Join(dir, "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(ctx, "file:"+silent, ""); err == nil || !strings.Contains(err.Error(), "does not answer `version`") || strings.HasSuffix(err.Error(), ": ") {
		t.Errorf("binary failing version silently: %v (want the exit status, no empty tail)", err)
	}
	chatty := filepath.Join(dir, "chatty")
	if err := os.WriteFile(chatty, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(ctx, "file:"+chatty, ""); err == nil || !strings.Contains(err.Error(), "with a version") {
		t.Errorf("binary printing no version: %v", err)
	}
	if _, err := Resolve(ctx, "file:"+filepath.Join(dir, "missing"), ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	// A script answering version resolves, and is not static.
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 0.38.17\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(ctx, "file:"+script, "")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := FileSHA256(script)
	if r.Static || r.Release.Name != "cometbft" || r.Release.Version != "v0.38.17+file."+sum[:16] || r.Release.File() != script {
		t.Errorf("script: %+v", r)
	}
}

func TestIsStatic(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "no go toolchain")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os/user\"\n\nfunc main() { user.Current() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cgo    string
		static bool
	}{{"0", true}, {"1", false}} {
		out := filepath.Join(dir, "bin-cgo"+tc.cgo)
		cmd := exec.Command("go", "build", "-o", out, src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+tc.cgo, "GOFLAGS=", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			if tc.cgo == "1" {
				t.Logf("no cgo toolchain: %s", b)
				continue
			}
			t.Fatalf("build: %v: %s", err, b)
		}
		got, err := IsStatic(out)
		if err != nil || got != tc.static {
			t.Errorf("CGO_ENABLED=%s: static %v, %v; want %v", tc.cgo, got, err, tc.static)
		}
	}
}
