package testenv

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the one -update flag of every package's golden tests: each test
// binary that imports testenv has it, so `go test ./internal/x -update`
// rewrites that package's testdata/ goldens.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Golden compares got with the file at path, or rewrites the file (creating
// its directory) under -update. A difference fails the test with the lines
// that differ; a missing file says how to create it.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
		return
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from what the test produced (go test -update to accept, then review the diff):\n%s", path, LineDiff(want, got))
	}
}

// maxDiffLines bounds LineDiff's output: a golden that differs everywhere
// would otherwise flood the log.
const maxDiffLines = 40

// LineDiff lists the lines of want and got that differ, by line number.
func LineDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		wl, gl := "<none>", "<none>"
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		if n++; n > maxDiffLines {
			fmt.Fprintf(&b, "… (more differing lines; %d lines wanted, %d got)\n", len(w), len(g))
			break
		}
		fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
	}
	return b.String()
}

// CopyDir copies the directory tree src (a testdata fixture) into a new
// temporary directory of the same base name, which it returns, so that a
// test's outputs never land in testdata.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// SameOnRerender reads files, calls render (which writes them again) and
// fails t for each file whose bytes changed: a report must be a pure
// function of its directory.
func SameOnRerender(t testing.TB, files []string, render func() error) {
	t.Helper()
	before := map[string][]byte{}
	for _, f := range files {
		before[f], _ = os.ReadFile(f)
	}
	if err := render(); err != nil {
		t.Fatalf("re-render: %v", err)
	}
	for _, f := range files {
		if after, _ := os.ReadFile(f); !bytes.Equal(after, before[f]) {
			t.Errorf("%s changed on re-render", f)
		}
	}
}
