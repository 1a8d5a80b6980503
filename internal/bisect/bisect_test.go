package bisect

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

func commits(n int) []Commit {
	cs := make([]Commit, n+1)
	for i := range cs {
		cs[i] = Commit{SHA: fmt.Sprintf("%02x%038d", i, 0), Subject: fmt.Sprint("commit ", i)}
	}
	return cs
}

// bisectWith plays a bisection of n commits after the good one against an
// oracle and returns the culprit, the possible range and the decisions.
func bisectWith(t *testing.T, n int, oracle func(i int) Mark) (int, []int, bool, int) {
	t.Helper()
	s, err := New("tree", "good", "bad", commits(n))
	if err != nil {
		t.Fatal(err)
	}
	for {
		i, ok := s.Next()
		if !ok {
			break
		}
		s.Commits[i].Mark = oracle(i)
		s.Decisions++
		if s.Decisions > n {
			t.Fatalf("more decisions than commits")
		}
	}
	first, maybe, ok := s.Culprit()
	return first, maybe, ok, s.Decisions
}

// TestBisectFindsEveryCulprit: whichever of n commits is the first bad
// one, the bisection names it within ceil(log2 n) decisions (the bad end
// is given), before the confirmation MaxDecisions counts.
func TestBisectFindsEveryCulprit(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 16, 17} {
		for k := 1; k <= n; k++ {
			first, maybe, ok, d := bisectWith(t, n, func(i int) Mark {
				if i >= k {
					return Bad
				}
				return Good
			})
			if !ok || first != k || maybe != nil {
				t.Errorf("n %d, culprit %d: named %d (ok %v, maybe %v)", n, k, first, ok, maybe)
			}
			if d > MaxDecisions(n)-1 {
				t.Errorf("n %d, culprit %d: %d decisions, max %d", n, k, d, MaxDecisions(n)-1)
			}
		}
	}
	if MaxDecisions(16) != 5 || MaxDecisions(1) != 1 || MaxDecisions(17) != 6 {
		t.Errorf("MaxDecisions: 16 -> %d, 1 -> %d, 17 -> %d", MaxDecisions(16), MaxDecisions(1), MaxDecisions(17))
	}
}

// TestBisectSkips: a skipped commit next to the culprit leaves both as
// the range (as git bisect says "could be any of"); a skip elsewhere is
// bisected around.
func TestBisectSkips(t *testing.T) {
	// Culprit 9, commit 8 skipped: 8 or 9.
	_, maybe, ok, _ := bisectWith(t, 16, func(i int) Mark {
		switch {
		case i == 8:
			return Skip
		case i >= 9:
			return Bad
		}
		return Good
	})
	if ok || !slices.Equal(maybe, []int{8, 9}) {
		t.Errorf("skip beside the culprit: ok %v, maybe %v; want [8 9]", ok, maybe)
	}
	// Culprit 12, commit 8 skipped: still 12.
	first, _, ok, _ := bisectWith(t, 16, func(i int) Mark {
		switch {
		case i == 8:
			return Skip
		case i >= 12:
			return Bad
		}
		return Good
	})
	if !ok || first != 12 {
		t.Errorf("skip away from the culprit: %d ok %v, want 12", first, ok)
	}
}

// TestNextAdjacent: skips left commits 6..9 apart (5 good, 9 bad); each
// is decided against its own parent, newest first, until one regressed
// against its parent (found) or a decision against a parent is skipped.
func TestNextAdjacent(t *testing.T) {
	for _, c := range []struct {
		name       string
		adjacent   map[int]Mark // decisions against the parent
		next, find int
	}{
		{"none yet: the bad end first", nil, 9, -1},
		{"the bad end regressed against its parent", map[int]Mark{9: Bad}, -1, 9},
		{"the bad end the same as its parent", map[int]Mark{9: Good}, 8, -1},
		{"the step two down", map[int]Mark{9: Good, 8: Good, 7: Bad}, -1, 7},
		{"the oldest, against the good commit", map[int]Mark{9: Good, 8: Good, 7: Good}, 6, -1},
		{"every one the same as its parent", map[int]Mark{9: Good, 8: Good, 7: Good, 6: Good}, -1, -1},
		{"a skip against a parent stops", map[int]Mark{9: Good, 8: Skip}, -1, -1},
	} {
		s, _ := New("tree", "good", "bad", commits(9))
		for i := 1; i <= 8; i++ {
			s.Commits[i].Mark = Good
		}
		for i := 6; i <= 8; i++ {
			s.Commits[i].Mark = Skip
		}
		for i, m := range c.adjacent {
			s.Adjacent = append(s.Adjacent, Confirmation{Commit: s.Commits[i].SHA, Parent: s.Commits[i-1].SHA, Mark: m})
		}
		if next, found := s.NextAdjacent(); next != c.next || found != c.find {
			t.Errorf("%s: next %d, found %d; want %d, %d", c.name, next, found, c.next, c.find)
		}
	}
	// Without skips Culprit answers: nothing to decide against parents.
	s, _ := New("tree", "good", "bad", commits(2))
	s.Commits[1].Mark = Good
	if next, found := s.NextAdjacent(); next != -1 || found != -1 {
		t.Errorf("no skips: next %d, found %d", next, found)
	}
}

func TestInconsistent(t *testing.T) {
	s, _ := New("tree", "good", "bad", commits(4))
	s.Commits[2].Mark, s.Commits[3].Mark = Bad, Good
	if w := s.Inconsistent(); len(w) != 1 || !strings.Contains(w[0], "judged good after the first bad") {
		t.Errorf("inconsistent: %v", w)
	}
	if _, err := New("tree", "good", "bad", commits(0)); err == nil {
		t.Error("an empty range accepted")
	}
}

func TestSaveRead(t *testing.T) {
	dir := t.TempDir()
	s, _ := New("tree", "good", "bad", commits(3))
	s.Commits[1].Mark = Good
	if err := Record.Write(dir, s); err != nil {
		t.Fatal(err)
	}
	r, err := Record.Read(dir)
	if err != nil || r.Commits[1].Mark != Good || r.Index(s.Commits[2].SHA[:8]) != 2 {
		t.Fatalf("read back: %+v, %v", r, err)
	}
	os.WriteFile(filepath.Join(dir, File), []byte(`{"schema_version": 9}`), 0o644)
	if _, err := Record.Read(dir); err == nil || !strings.Contains(err.Error(), "schema_version 9") {
		t.Errorf("a newer schema: %v", err)
	}
	os.WriteFile(filepath.Join(dir, File), []byte(`{"schema_version": 1, "commits": [{"sha": "abc"}]}`), 0o644)
	if _, err := Record.Read(dir); err == nil || !strings.Contains(err.Error(), "fewer than two commits") {
		t.Errorf("one commit: %v", err)
	}
}

// TestRangeAndWorktree: a real repository's first-parent range, oldest
// first with subjects; bad names that are not revisions or not descendants
// are refused; a worktree checks a commit out and goes away.
func TestRangeAndWorktree(t *testing.T) {
	testenv.NeedCommand(t, "git", "git")
	tree := t.TempDir()
	run := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", tree, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	var shas []string
	for i := range 4 {
		os.WriteFile(filepath.Join(tree, "f"), []byte(fmt.Sprint(i)), 0o644)
		run("add", "f")
		run("commit", "-q", "-m", fmt.Sprint("change ", i))
		shas = append(shas, run("rev-parse", "HEAD"))
	}
	ctx := context.Background()
	cs, err := Range(ctx, tree, shas[0], "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 || cs[0].SHA != shas[0] || cs[3].SHA != shas[3] || cs[2].Subject != "change 2" {
		t.Errorf("range: %+v", cs)
	}
	if _, err := Range(ctx, tree, "HEAD", shas[0]); err == nil || !strings.Contains(err.Error(), "not an ancestor") {
		t.Errorf("reversed range: %v", err)
	}
	if _, err := Range(ctx, tree, "nope", "HEAD"); err == nil || !strings.Contains(err.Error(), "--good nope") {
		t.Errorf("bad revision: %v", err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	remove, err := Worktree(ctx, tree, shas[1], wt)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "f")); string(b) != "1" {
		t.Errorf("worktree holds %q, want commit 1's", b)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree left: %v", err)
	}
}
