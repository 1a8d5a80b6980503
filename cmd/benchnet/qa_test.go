package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A QA's overall Test Result is its exit code, through the verdict error
// every experiment returns (experiment.QAOutcome, Result.Err).
func TestQAExitCodes(t *testing.T) {
	ctx := context.Background()
	outcome := func(r judge.Result) error {
		return experiment.QAOutcome("qa", &rundir.QAIndex{Overall: r, Results: []rundir.QAResult{{Scenario: "Steady test", Result: r, Judged: true}}}).Err()
	}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{outcome(judge.ResultPass), 0},
		{outcome(judge.ResultFail), 3},
		{outcome(judge.ResultInconclusive), 4},
		{&experiment.VerdictError{Verdict: experiment.Inconclusive, Msg: "bisect ended with 2 candidates"}, 4},
		{usageError{errors.New("qa refused: needs 2 MiB of disk, 1 MiB is free")}, 2},
		{errors.New("up: boom"), 1},
	} {
		if got := exitCode(ctx, tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if err := outcome(judge.ResultFail); !strings.Contains(err.Error(), "Steady test Fail") {
		t.Errorf("a Fail's error does not name the failing scenario: %v", err)
	}
}

// Bad input is refused before anything starts, naming the flag; the plan
// is printed first and a budget it cannot fit refuses it with both numbers.
func TestQAFlagsAndPlan(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"qa", "--candidate", "cometbft@v1.0.1"}, 2, "--baseline: give a release reference"},
		{[]string{"qa", "--baseline", "cometbft@v1.0", "--candidate", "cometbft@v1.0.1"}, 2, "--baseline: \"cometbft@v1.0\""},
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "nope"}, 2, "--candidate:"},
		{[]string{"qa", "--resume", "/nonexistent", "--quick"}, 2, "--resume takes the builds"},
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--plan"}, 0, "total:"},
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--budget", "2m", "--plan"}, 2, "exceeds the budget 2m0s"},
		// The quick profile fits its 15 minutes on local; on swarm every
		// testnet takes ~45 s more to come up, and the plan says so first.
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--quick", "--plan"}, 0, "(budget 15m0s)"},
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--quick", "--runner", "swarm", "--plan"}, 2, "exceeds the budget 15m0s (--budget; --steps to leave scenarios out)"},
		{[]string{"qa", "--baseline", "cometbft@v1.0.1", "--candidate", "cometbft@v1.0.1", "--quick", "--runner", "swarm", "--budget", "40m", "--plan"}, 0, "runner swarm: each run's testnet up and down takes ~45 s more than on local"},
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

// captureStderr returns what f wrote to stderr and stdout.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldErr, oldOut := os.Stderr, os.Stdout
	os.Stderr, os.Stdout = w, w
	done := make(chan string)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- b.String()
	}()
	f()
	w.Close()
	os.Stderr, os.Stdout = oldErr, oldOut
	return <-done
}
