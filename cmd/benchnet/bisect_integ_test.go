package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/bisect"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestBisectLocalHistory is the CI-sized synthetic regression history: a
// git repository of CometBFT v1.0.1 with a harmless commit and then one
// whose kvstore spins 100 µs per CheckTx. `benchnet bisect` names the
// second, in at most MaxDecisions (one bisection step and the
// confirmation against its parent, which reuses the good build's
// operating point), and removes its worktrees. The 16-commit history of
// the issue is the same command on a longer range (docs/history.md).
func TestBisectLocalHistory(t *testing.T) {
	testenv.NeedRoot(t) // QAs on real nodes: about 8 minutes
	tree := copyCometBFTTree(t, t.TempDir())
	good := commitTree(t, tree)
	f, err := os.OpenFile(filepath.Join(tree, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n<!-- a harmless change -->\n")
	f.Close()
	harmless := gitCommitAll(t, tree, "docs: a harmless change")
	patchCheckTxSpin(t, tree, 100*time.Microsecond)
	bad := gitCommitAll(t, tree, "kvstore: spin 100 µs in CheckTx")
	// Three pairs at most: the spin reads ~0.35 and decides at three; the
	// harmless commit cannot decide "same" at 4 either (0.982 [0.794,
	// 1.215], CI 2026-11-30), so it is skipped after 3.
	m := qaTestManifests(t, "10.213.252.0/24", "10.213.253.0/24", "rotate = \"\"\nmax_pairs = 3\n")
	out := testenv.OutputDir(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*qaTestBudget)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, benchnetBinary(t), "bisect", tree, "--good", good, "--bad", bad, m, "-o", out, "--budget", qaTestBudget.String())
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 90 * time.Second
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	t.Logf("benchnet bisect: %v after %s\n%s", err, time.Since(start).Round(time.Second), tail(string(b), 30))
	if err != nil {
		t.Fatalf("bisect failed: %v", err)
	}
	if !strings.Contains(string(b), "first bad commit: "+bad+" kvstore: spin 100 µs in CheckTx") || !strings.Contains(string(b), "confirmed against its parent "+bisect.Short(harmless)) {
		t.Errorf("the output does not name the spinning commit, confirmed against its parent")
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-bisect-*"))
	if len(dirs) != 1 {
		t.Fatalf("bisect directories: %v", dirs)
	}
	st, err := bisect.Record.Read(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.FirstBad != bad || st.Commits[1].Mark == bisect.Bad || st.Confirm == nil || !st.Confirm.Confirmed || !(st.Confirm.Hi < 0.9) {
		t.Errorf("bisect.json: first bad %s, harmless %s, confirmation %+v", st.FirstBad, st.Commits[1].Mark, st.Confirm)
	}
	if st.Decisions > bisect.MaxDecisions(2) {
		t.Errorf("%d decisions, at most %d", st.Decisions, bisect.MaxDecisions(2))
	}
	if wt, _ := exec.Command("git", "-C", tree, "worktree", "list").Output(); strings.Count(strings.TrimSpace(string(wt)), "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}
}
