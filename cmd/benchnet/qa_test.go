package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestQAExitCodes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("%w: qa result Fail", errThreshold), 3},
		{fmt.Errorf("%w: qa result Inconclusive", errInconclusive), 4},
		{errors.Join(fmt.Errorf("%w: qa result Inconclusive", errInconclusive), errors.New("a step failed")), 4},
		{usageError{errors.New("qa refused: needs 2 MiB of disk, 1 MiB is free")}, 2},
		{errors.New("up: boom"), 1},
	} {
		if got := exitCode(ctx, tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
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
