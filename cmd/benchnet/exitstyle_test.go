package main

import (
	"strings"
	"testing"
)

// TestGitBisectExit: each benchnet exit code lands in the right class of
// git bisect run's protocol, and the flag reaches the process's exit.
func TestGitBisectExit(t *testing.T) {
	for _, c := range []struct{ code, want int }{
		{exitOK, 0}, {exitThreshold, 1}, {exitInconclusive, 125}, {exitFailure, 125}, {exitUsage, 128}, {exitInterrupted, 130},
	} {
		if got := gitBisectExit(c.code); got != c.want {
			t.Errorf("gitBisectExit(%d) = %d, want %d", c.code, got, c.want)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		// A bad flag would fail at every commit: git must abort.
		{[]string{"--exit-codes", "git-bisect", "qa", "--candidate", "cometbft@v1.0.1"}, 128, "--baseline"},
		{[]string{"--exit-codes", "git-bisect", "qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--plan"}, 0, "total:"},
		{[]string{"--exit-codes", "nope", "plan"}, exitUsage, `--exit-codes: "nope"`},
	} {
		out := captureStderr(t, func() {
			if got := run(tc.args); got != tc.code {
				t.Errorf("%v: exit %d, want %d", tc.args, got, tc.code)
			}
		})
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.args, tc.want, out)
		}
	}
}
