package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// TestHistoryRunArgs: bad input to `history run` is refused before
// anything starts, naming the argument.
func TestHistoryRunArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "run", "cometbft@v1.0.1"}, "give two or more builds"},
		{[]string{"history", "run", "cometbft@v1.0.1", "cometbft@v1.0"}, "REF 2:"},
		{[]string{"history", "run", "cometbft@v1.0.1", "cometbft@v1.0.1"}, "REF 2: cometbft@v1.0.1 is given twice"},
		{[]string{"history", "run", "cometbft@v0.38.17", "cometbft@v1.0.1", "--control", "cometbft@v0.37.15"}, "--control cometbft@v0.37.15 is not one of the builds"},
		{[]string{"history", "run", "cometbft@v0.38.17", "cometbft@v1.0.1", "--repeats", "1"}, "--repeats: 1"},
		{[]string{"history", "run", "--resume", "/nonexistent"}, "/nonexistent"},
	} {
		out := captureStderr(t, func() {
			if got := run(tc.args); got != exitUsage {
				t.Errorf("%v: exit %d, want %d", tc.args, got, exitUsage)
			}
		})
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.args, tc.want, out)
		}
	}
}

func TestReleaseLineState(t *testing.T) {
	refs, m := splitRefsManifest([]string{"cometbft@v0.38.17", "./tree", "qa.toml"})
	if !slices.Equal(refs, []string{"cometbft@v0.38.17", "./tree"}) || m != "qa.toml" {
		t.Errorf("split: %v %q", refs, m)
	}
	dir := t.TempDir()
	st := &rundir.ReleaseLine{SchemaVersion: rundir.ReleaseLineSchema, Refs: refs, Control: refs[0], Repeats: 3, BuildQAs: map[string]string{"./tree": "build-02/x-qa"}}
	if err := rundir.ReleaseLineRecord.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	back, err := rundir.ReleaseLineRecord.Read(dir)
	if err != nil || back.BuildQAs["./tree"] != "build-02/x-qa" || back.Control != refs[0] {
		t.Errorf("read back %+v: %v", back, err)
	}
}
