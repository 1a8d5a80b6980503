package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// down takes a run directory or its state.json (a trailing slash too).
func TestStatePaths(t *testing.T) {
	got := statePaths([]string{"runs/a", "runs/b/", "runs/c/state.json", "/abs/d/state.json"})
	want := []string{"runs/a/state.json", "runs/b/state.json", "runs/c/state.json", "/abs/d/state.json"}
	if !slices.Equal(got, want) {
		t.Errorf("statePaths = %v, want %v", got, want)
	}
}

// down with no argument ends the live runs under the directory that asks
// and leaves the others (a sibling whose name extends this one's too).
func TestRunsUnder(t *testing.T) {
	tmp := t.TempDir()
	here := filepath.Join(tmp, "ci")
	for _, d := range []string{"ci/runs/a", "ci/runs/b", "ci-2/runs/c", "qa/runs/d"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(tmp, "ci", "runs"), filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	state := func(d string) string { return filepath.Join(tmp, d, "state.json") }
	live := []string{state("ci/runs/a"), state("ci-2/runs/c"), state("qa/runs/d"), state("link/b")}
	under, others := runsUnder(live, here)
	if want := []string{state("ci/runs/a"), state("link/b")}; !slices.Equal(under, want) {
		t.Errorf("under %s: %v, want %v", here, under, want)
	}
	if want := []string{state("ci-2/runs/c"), state("qa/runs/d")}; !slices.Equal(others, want) {
		t.Errorf("others: %v, want %v", others, want)
	}
	if under, _ := runsUnder(live, tmp); len(under) != len(live) {
		t.Errorf("under the parent of all: %v", under)
	}
}
