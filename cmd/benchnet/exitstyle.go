package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Exit-code styles: benchnet's own list (main.go), or git bisect run's
// protocol so that `git bisect run benchnet qa … --exit-codes git-bisect`
// bisects on the QA's verdict with no wrapper script.
const (
	exitStyleBenchnet  = "benchnet"
	exitStyleGitBisect = "git-bisect"
)

// addExitStyleFlag registers --exit-codes on the root; *style is read
// after the command ran.
func addExitStyleFlag(root *cobra.Command, style *string) {
	root.PersistentFlags().StringVar(style, "exit-codes", exitStyleBenchnet,
		`exit-code protocol: "benchnet" (0 ok, 1 failure, 2 usage, 3 fail, 4 inconclusive, 130 interrupted) or "git-bisect" (0 good, 1 bad, 125 skip, 128 abort: for git bisect run)`)
}

// checkExitStyle rejects an unknown --exit-codes value (a usage error).
func checkExitStyle(style string) error {
	if style != exitStyleBenchnet && style != exitStyleGitBisect {
		return usageError{fmt.Errorf("--exit-codes: %q: want %q or %q", style, exitStyleBenchnet, exitStyleGitBisect)}
	}
	return nil
}

// gitBisectExit maps a benchnet exit code onto git bisect run's protocol
// (git-bisect(1): 0 good; 1 to 127 except 125 bad; 125 skip; above 127
// abort). A verdict decides: Pass is good, Fail (a regression, or a
// candidate that cannot run) is bad. Inconclusive and a failed run say
// nothing of the commit, so it is skipped, as git skips a commit that does
// not build. Bad usage would fail at every commit, and an interrupt is the
// user's: both abort the bisection.
func gitBisectExit(code int) int {
	switch code {
	case exitOK:
		return 0
	case exitThreshold:
		return 1
	case exitInconclusive, exitFailure:
		return 125
	case exitInterrupted:
		return exitInterrupted
	default:
		return 128
	}
}
