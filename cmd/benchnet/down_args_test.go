package main

import (
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
