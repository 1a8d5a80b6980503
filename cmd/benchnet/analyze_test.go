package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeBadInput: analyze refuses what is not a run directory with a
// load, with exit 2 and a message naming what is missing.
func TestAnalyzeBadInput(t *testing.T) {
	noSent := t.TempDir()
	if err := os.WriteFile(filepath.Join(noSent, "plan.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze"}, "accepts 1 arg"},
		{[]string{"analyze", filepath.Join(t.TempDir(), "missing")}, "no such file"},
		{[]string{"analyze", t.TempDir()}, "has no plan.json"},
		{[]string{"analyze", noSent}, "has no sent.csv: not a run directory, or its load never started"},
	} {
		if code := run(c.args); code != exitUsage {
			t.Errorf("benchnet %s: exit %d, want %d", strings.Join(c.args, " "), code, exitUsage)
		}
		if out := runBinary(t, c.args...); !strings.Contains(out, c.want) {
			t.Errorf("benchnet %s: output lacks %q:\n%s", strings.Join(c.args, " "), c.want, out)
		}
	}
}
