package binaries

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestEnsureLocal builds a small source tree shaped like CometBFT's (module
// with cmd/cometbft) through a reference, reuses it, adopts the result as a
// file: reference, and refuses a tree that changed after its check.
func TestEnsureLocal(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "no go toolchain")
	}
	t.Setenv("BENCHNET_CACHE", t.TempDir())
	ctx := context.Background()
	tree := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":               "module example.com/fork\n\ngo 1.22\n",
		"version/version.go":   "package version\n\nconst CMTSemVer = \"1.0.1\"\n",
		"cmd/cometbft/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\n\t\"example.com/fork/version\"\n)\n\nfunc main() {\n\tif len(os.Args) > 1 && os.Args[1] == \"version\" {\n\t\tfmt.Println(version.CMTSemVer)\n\t}\n}\n",
	} {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := release.Resolve(ctx, tree, "")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Ensure(ctx, res.Release, "cometbft", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || strings.TrimSpace(string(out)) != "1.0.1" {
		t.Fatalf("built binary says %q, %v", out, err)
	}
	prov, err := Provenance(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: tree", "dir: " + tree, "module: example.com/fork", "content.sha256: ", "sha256: ", "build: go build -trimpath"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	if static, err := release.IsStatic(bin); err != nil || !static {
		t.Errorf("tree build static = %v, %v; want CGO_ENABLED=0's static binary", static, err)
	}
	if !Cached(res.Release, "cometbft") {
		t.Error("not cached after the build")
	}
	if _, err := Ensure(ctx, res.Release, "abci-cli", nil); err == nil || !strings.Contains(err.Error(), "has no abci-cli") {
		t.Errorf("a tool the tree lacks: %v", err)
	}

	// The built binary as a prebuilt file: reference.
	fres, err := release.Resolve(ctx, "file:"+bin, "")
	if err != nil {
		t.Fatal(err)
	}
	fbin, err := Ensure(ctx, fres.Release, "cometbft", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := release.FileSHA256(bin)
	b, _ := release.FileSHA256(fbin)
	if a != b || fbin == bin {
		t.Errorf("file: copy %s (sha %s) of %s (sha %s)", fbin, b, bin, a)
	}

	// Edited after the check: the old release is refused, not built from new code.
	edited := res.Release
	edited.Version += "x" // a release the tree no longer resolves to
	if _, err := Ensure(ctx, edited, "cometbft", nil); err == nil || !strings.Contains(err.Error(), "changed since it was checked") {
		t.Errorf("stale tree release: %v", err)
	}
}
