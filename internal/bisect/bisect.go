// Package bisect is the bisection of a commit range by a measured verdict:
// which commits to decide, in what order, and when one commit is left. It
// holds no measurement: a decision (good, bad or skip) comes from an
// oracle, the QA's paired saturation decision in `benchnet bisect`.
package bisect

import (
	"errors"
	"fmt"
	"math"

	"github.com/benchnet/benchnet/internal/rundir"
)

// Mark is a commit's decision.
type Mark string

// Marks, as git bisect names them. Skip: decided nothing (inconclusive,
// or the commit could not be measured).
const (
	Unknown Mark = ""
	Good    Mark = "good"
	Bad     Mark = "bad"
	Skip    Mark = "skip"
)

// Commit is one commit of the range and its decision.
type Commit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
	Mark    Mark   `json:"mark,omitempty"`
	// Given: marked by the user (--good, --bad), not measured.
	Given bool `json:"given,omitempty"`
	// The decision: its QA directory, the ratio candidate/good with its
	// interval, and why.
	QA    string  `json:"qa,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
	Lo    float64 `json:"ratio_lo,omitempty"`
	Hi    float64 `json:"ratio_hi,omitempty"`
	Why   string  `json:"why,omitempty"`
}

// Confirmation is a commit decided against its parent: the last decision
// (the first bad commit against its parent), and, when skips left several
// commits apart, each of them newest first (State.Adjacent).
type Confirmation struct {
	Commit    string  `json:"commit,omitempty"`
	Parent    string  `json:"parent"`
	Mark      Mark    `json:"mark,omitempty"`
	QA        string  `json:"qa"`
	Confirmed bool    `json:"confirmed"`
	Ratio     float64 `json:"ratio,omitempty"`
	Lo        float64 `json:"ratio_lo,omitempty"`
	Hi        float64 `json:"ratio_hi,omitempty"`
	Why       string  `json:"why"`
}

// State is a bisection as bisect.json keeps it. Commits run oldest first
// along the first-parent line: Commits[0] is the good revision, the last
// the bad one.
type State struct {
	SchemaVersion int    `json:"schema_version"`
	Tree          string `json:"tree"`
	Good          string `json:"good"`
	Bad           string `json:"bad"`
	Metric        string `json:"metric"`
	// Manifest is the QA manifest the decisions run (empty: the built-in
	// one); BaselineQA the first decision's QA, whose search of the good
	// build the later ones reuse.
	Manifest   string        `json:"manifest,omitempty"`
	BaselineQA string        `json:"baseline_qa,omitempty"`
	Commits    []Commit      `json:"commits"`
	Decisions  int           `json:"decisions"`
	Confirm    *Confirmation `json:"confirm,omitempty"`
	// Adjacent are the decisions of commits against their own parents
	// after skips left several apart (NextAdjacent).
	Adjacent []Confirmation `json:"adjacent,omitempty"`
	Started  string         `json:"started"`
	Finished string         `json:"finished,omitempty"`
	// FirstBad is the commit named (empty until found); Range, when skips
	// left several, the commits it may be any of.
	FirstBad string   `json:"first_bad,omitempty"`
	Range    []string `json:"range,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// SchemaVersion of bisect.json.
const SchemaVersion = 1

// File is the state's name in a bisection directory.
const File = "bisect.json"

// New is the state of a range: good first, then every commit after it up
// to bad (the last).
func New(tree, good, bad string, commits []Commit) (*State, error) {
	if len(commits) < 2 {
		return nil, fmt.Errorf("the range %s..%s holds no commit after the good one", good, bad)
	}
	s := &State{SchemaVersion: SchemaVersion, Tree: tree, Good: good, Bad: bad, Commits: commits}
	s.Commits[0].Mark, s.Commits[0].Given = Good, true
	s.Commits[len(commits)-1].Mark, s.Commits[len(commits)-1].Given = Bad, true
	return s, nil
}

// window is the open range still in question: lo the last good commit
// before the first bad one, hi that bad one.
func (s *State) window() (lo, hi int) {
	hi = len(s.Commits) - 1
	for i, c := range s.Commits {
		if c.Mark == Bad {
			hi = i
			break
		}
	}
	for i := hi - 1; i >= 0; i-- {
		if s.Commits[i].Mark == Good {
			return i, hi
		}
	}
	return 0, hi
}

// Next is the commit to decide next: of the undecided ones strictly
// between the last good and the first bad, the one nearest their middle.
// ok is false when none is left (Culprit then answers).
func (s *State) Next() (i int, ok bool) {
	lo, hi := s.window()
	mid := float64(lo+hi) / 2
	best := -1
	for j := lo + 1; j < hi; j++ {
		if s.Commits[j].Mark != Unknown {
			continue
		}
		if best < 0 || math.Abs(float64(j)-mid) < math.Abs(float64(best)-mid) {
			best = j
		}
	}
	return best, best >= 0
}

// Culprit is the first bad commit once no commit is left to decide: the
// bad commit right after the last good one, or, when skipped commits sit
// between them, every commit it may be (ok false).
func (s *State) Culprit() (first int, maybe []int, ok bool) {
	if _, more := s.Next(); more {
		return -1, nil, false
	}
	lo, hi := s.window()
	if hi == lo+1 {
		return hi, nil, true
	}
	for j := lo + 1; j <= hi; j++ {
		maybe = append(maybe, j)
	}
	return hi, maybe, false
}

// NextAdjacent goes on where skips left several commits apart (Culprit
// not ok): each of them is decided against its own parent, newest first.
// The first bad one (hi) regressed against the good revision; when it is
// the same as its parent, that parent carries the regression too, and so
// on down. found is the commit that regressed against its parent (the
// step, confirmed by that decision); next the commit to decide; both -1
// when a decision against a parent was skipped too or none is left.
func (s *State) NextAdjacent() (next, found int) {
	_, maybe, ok := s.Culprit()
	if ok {
		return -1, -1
	}
	for k := len(maybe) - 1; k >= 0; k-- {
		j := maybe[k]
		a := s.AdjacentOf(j)
		switch {
		case a == nil:
			return j, -1
		case a.Mark == Bad:
			return -1, j
		case a.Mark != Good:
			return -1, -1
		}
	}
	return -1, -1
}

// AdjacentOf is commit i's decision against its parent (nil: none yet).
func (s *State) AdjacentOf(i int) *Confirmation {
	for k := range s.Adjacent {
		if s.Adjacent[k].Commit == s.Commits[i].SHA {
			return &s.Adjacent[k]
		}
	}
	return nil
}

// Inconsistent names good commits after the first bad one: the verdicts
// are not monotone along the line (a flaky decision, or a regression that
// was fixed and came back).
func (s *State) Inconsistent() []string {
	_, hi := s.window()
	var out []string
	for _, c := range s.Commits[hi+1:] {
		if c.Mark == Good {
			out = append(out, fmt.Sprintf("%s was judged good after the first bad %s", Short(c.SHA), Short(s.Commits[hi].SHA)))
		}
	}
	return out
}

// MaxDecisions is the decisions a range of n commits after the good one
// needs without skips, confirmation included: ceil(log2 n) + 1.
func MaxDecisions(n int) int {
	d := 0
	for m := 1; m < n; m *= 2 {
		d++
	}
	return d + 1
}

// Index is the position of sha (a full or abbreviated hash), -1 if absent.
func (s *State) Index(sha string) int {
	for i, c := range s.Commits {
		if c.SHA == sha || (len(sha) >= 7 && len(c.SHA) >= len(sha) && c.SHA[:len(sha)] == sha) {
			return i
		}
	}
	return -1
}

// Record is bisect.json's codec: written after every step so an
// interrupted bisect goes on; another schema, or fewer than two commits, is
// refused.
var Record = rundir.Record[State]{Name: File, Schema: SchemaVersion, Exact: true, Check: func(s *State) error {
	if len(s.Commits) < 2 {
		return errors.New("fewer than two commits")
	}
	return nil
}}

// Short is a commit hash as printed.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
