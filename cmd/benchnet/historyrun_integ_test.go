package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testenv"
)

// TestHistoryRunLocalTree runs the release line on real nodes, CI-sized:
// a v1.0.1 tree whose kvstore spins 100 µs per CheckTx (about a third of
// v1.0.1's capacity here) and the control cometbft@v1.0.1. All three
// stages must finish: the control's A/A saturation QA sets the operating
// point, the tree's paired decision against it reads "lower", and the
// steady compare runs both builds in 2 interleaved rounds; every stage is
// recorded in the history, whose view then draws both builds.
func TestHistoryRunLocalTree(t *testing.T) {
	testenv.NeedRoot(t) // three stages of QA runs on real nodes: about 6 minutes
	tree := copyCometBFTTree(t, t.TempDir())
	commit := commitTree(t, tree)
	patchCheckTxSpin(t, tree, 100*time.Microsecond)
	spin := gitCommitAll(t, tree, "kvstore: spin 100 µs in CheckTx")
	m := qaTestManifests(t, "10.213.208.0/24", "10.213.209.0/24", "rotate = \"\"\nmin_pairs = 2\nmax_pairs = 3\n")
	out := testenv.OutputDir(t)
	db := filepath.Join(t.TempDir(), "history.db")

	b, _, err := runLong(t, 3*qaTestBudget, "history", "run", tree, "cometbft@v1.0.1", m,
		"--repeats", "2", "--duration", "6s", "-o", out, "--history", db, "--budget", qaTestBudget.String())
	// The line measures: a build worse than the control is a finding, so
	// the exit is 0 once every stage measured every build.
	if code := exitOf(err); code != exitOK {
		t.Fatalf("history run: exit %d, want 0", code)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-release-line-*"))
	if len(dirs) != 1 {
		t.Fatalf("release-line directories: %v", dirs)
	}
	st, err := rundir.ReleaseLineRecord.Read(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.Finished == "" || st.Control != "cometbft@v1.0.1" || st.ControlQA == "" || !(st.Rate > 0) || st.Steady == "" || st.BuildQAs[tree] == "" {
		t.Fatalf("release-line.json is not a finished line: %+v", st)
	}
	if !strings.Contains(b, "release line: 2 builds, control cometbft@v1.0.1") {
		t.Error("the summary was not printed")
	}

	// Stage 2: the spinning tree's capacity against the control's.
	x, err := rundir.QARecord.Read(st.BuildQAs[tree])
	if err != nil {
		t.Fatal(err)
	}
	if x.Saturation == nil || x.Saturation.Paired == nil {
		t.Fatalf("the tree's QA has no paired saturation decision: %+v", x.Saturation)
	}
	if p := x.Saturation.Paired; !(p.Hi > 0 && p.Hi < 0.9) || p.Outcome == judge.OutcomeInconclusive {
		t.Errorf("the tree's capacity ratio %.3f [%.3f, %.3f] (%s), want lower than 0.9 with its interval", p.Ratio, p.Lo, p.Hi, p.Outcome)
	}
	if x.Candidate.Commit != spin {
		t.Errorf("the tree's QA measured commit %q, want %s", x.Candidate.Commit, spin)
	}

	// Stage 3: both builds, 2 rounds each, interleaved.
	c, err := rundir.CompareRecord.Read(st.Steady)
	if err != nil {
		t.Fatal(err)
	}
	perVariant := map[string]int{}
	for _, r := range c.Runs {
		if r.Status == rundir.RunDone {
			perVariant[r.Variant]++
		}
	}
	if len(perVariant) != 2 {
		t.Fatalf("steady runs per build: %v, want both builds", perVariant)
	}
	for v, n := range perVariant {
		if n != 2 {
			t.Errorf("steady: %s ran %d times, want 2", v, n)
		}
	}

	// The history holds every stage, and its view draws both builds.
	view := t.TempDir()
	code, stdout, errs := execCLI(t, "history", "--history", db, "--scenario", "qa", "-o", view)
	if code != exitOK {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "cometbft@v1.0.1") || !strings.Contains(stdout, commit[:7]) && !strings.Contains(stdout, spin[:7]) {
		t.Errorf("the history view does not draw both builds:\n%s", stdout)
	}
	t.Logf("history view:\n%s", stdout)
}
