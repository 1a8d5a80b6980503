package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadReferences: every kind of bad release reference is refused with
// exit 2 at the manifest's line (or the argument of build), before anything
// is built or created.
func TestBadReferences(t *testing.T) {
	bin := benchnetBinary(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache") // a fresh cache: the proxy is asked once
	mkfile := func(name, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	mkfile("notmod/README", "not a module\n", 0o644)
	mkfile("lib/go.mod", "module example.com/lib\n\ngo 1.22\n", 0o644)
	mkfile("lib/lib.go", "package lib\n", 0o644)
	mkfile("noexec", "#!/bin/sh\necho 1.0.1\n", 0o644)
	mkfile("mute", "#!/bin/sh\nexit 1\n", 0o755)
	mkfile("script", "#!/bin/sh\necho 1.0.1\n", 0o755)

	manifest := func(release string, extra string) string {
		return "name = \"bad\"\n[node.validator]\ncount = 1\nrelease = \"" + release + "\"\n" + extra
	}
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{"not a module", manifest("./notmod", ""), []string{`bad.toml:4: node.validator.release: "./notmod": ` + filepath.Join(dir, "notmod") + " is not a Go module (no go.mod)"}},
		{"no main package", manifest("path:lib", ""), []string{`bad.toml:4: node.validator.release: "path:lib": ` + filepath.Join(dir, "lib") + " is a Go module (example.com/lib) but holds no cometbft or tendermint main package"}},
		{"missing dir", manifest("../nowhere", ""), []string{`bad.toml:4: node.validator.release: "../nowhere":`, "no such file or directory"}},
		{"not executable", manifest("file:noexec", ""), []string{`bad.toml:4: node.validator.release: "file:noexec": ` + filepath.Join(dir, "noexec") + " is not executable"}},
		{"no version", manifest("file:mute", ""), []string{`bad.toml:4: node.validator.release: "file:mute": ` + filepath.Join(dir, "mute") + " does not answer `version`"}},
		{"tag not on proxy", manifest("cometbft@v9.9.9", ""), []string{`bad.toml:4: node.validator.release: "cometbft@v9.9.9": tag v9.9.9 of github.com/cometbft/cometbft is not on the module proxy ("This module version is not available")`}},
		{"unknown module", manifest("gaia@v1.0.0", ""), []string{`bad.toml:4: node.validator.release: "gaia@v1.0.0": unknown module name "gaia"`}},
		{"commit refused", manifest("cometbft@4ced46d3", ""), []string{`bad.toml:4: node.validator.release: "cometbft@4ced46d3": the module proxy refuses github.com/cometbft/cometbft@4ced46d3: "This module version is not available". Check the commit out`, "pass the directory"}},
		{"not static for docker", manifest("file:script", "[infra]\nrunner = \"docker\"\n"), []string{`bad.toml:4: node.validator.release: "file:script" is not a static binary`}},
		{"file without abci-cli", manifest("file:script", "app = \"kvstore-socket\"\n"), []string{`"file:script" is a prebuilt node binary without abci-cli`}},
		{"variant", manifest("cometbft@v1.0.1", "[variants.a]\n[variants.b]\nnode.validator.release = \"./notmod\"\n"), []string{`bad.toml:7: variants.b.node.validator.release: "./notmod":`, "is not a Go module"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mf := filepath.Join(dir, "bad.toml")
			if err := os.WriteFile(mf, []byte(tc.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "runs")
			for _, args := range [][]string{{"plan", mf}, {"up", mf, "--output", out}} {
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "BENCHNET_CACHE="+cache)
				got, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
					t.Fatalf("benchnet %s: %v, want exit %d:\n%s", args[0], err, exitUsage, got)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(got), w) {
						t.Errorf("benchnet %s output lacks %q:\n%s", args[0], w, got)
					}
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("up created %s for a bad reference", out)
			}
			if ents, _ := os.ReadDir(filepath.Join(cache, "bin")); len(ents) > 0 {
				t.Errorf("a bad reference put %d entries into the binary cache", len(ents))
			}
		})
	}

	// build REF names the argument.
	for _, tc := range []struct {
		ref, want string
	}{
		{"./notmod", `build REF: "./notmod": ` + filepath.Join(dir, "notmod") + " is not a Go module"},
		{"cometbft@v9.9.9", `build REF: "cometbft@v9.9.9": tag v9.9.9 of github.com/cometbft/cometbft is not on the module proxy`},
		{"cometbft@latest", `build REF: "cometbft@latest": releases are pinned`},
		{"file:mute", "does not answer `version`"},
	} {
		cmd := exec.Command(bin, "build", tc.ref)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BENCHNET_CACHE="+cache)
		got, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(got), tc.want) {
			t.Errorf("benchnet build %s: %v (want exit %d) output lacks %q:\n%s", tc.ref, err, exitUsage, tc.want, got)
		}
	}

	// The refusal of a missing tag was looked up once and cached.
	if _, err := os.Stat(filepath.Join(cache, "refs", "github.com!cometbft!cometbft@v9.9.9.json")); err != nil {
		t.Errorf("the proxy's refusal was not cached: %v", err)
	}
}
