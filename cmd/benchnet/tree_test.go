package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

// copyCometBFTTree copies CometBFT v1.0.1's source out of the module cache
// into dir/cometbft, writable, and returns the tree: a local source tree
// to build as a release reference.
func copyCometBFTTree(t *testing.T, dir string) string {
	t.Helper()
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := testenv.NeedFile(t, filepath.Join(strings.TrimSpace(string(gomodcache)), "github.com", "cometbft", "cometbft@v1.0.1"),
		"go mod download github.com/cometbft/cometbft@v1.0.1")
	tree := filepath.Join(dir, "cometbft")
	for _, c := range [][]string{{"cp", "-r", src, tree}, {"chmod", "-R", "u+w", tree}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
	return tree
}

// patchBlockSleep makes a v1.0.1 tree sleep d in consensus before it
// commits every block (State.finalizeCommit): a regression that shows in
// the block interval. Block sync does not pass there, so the candidate's
// full nodes and seeds still catch up at the stock pace (a sleep in
// BlockExecutor.applyBlock slowed their block sync to d per block, and a
// QA's candidate testnet was never ready within its minute).
func patchBlockSleep(t *testing.T, tree string, d time.Duration) {
	t.Helper()
	file := filepath.Join(tree, "internal", "consensus", "state.go")
	code, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	anchor := "func (cs *State) finalizeCommit(height int64) {\n"
	if !bytes.Contains(code, []byte(anchor)) || !bytes.Contains(code, []byte("\t\"time\"\n")) {
		t.Fatal("internal/consensus/state.go of v1.0.1 changed shape: update the patch")
	}
	code = bytes.Replace(code, []byte(anchor), []byte(anchor+"\ttime.Sleep("+strconv.Itoa(int(d.Milliseconds()))+" * time.Millisecond) // benchnet test patch\n"), 1)
	if err := os.WriteFile(file, code, 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitTree makes tree a git repository with everything committed and
// returns the commit: a later patch leaves it dirty, as a branch under
// test usually is.
func commitTree(t *testing.T, tree string) string {
	t.Helper()
	testenv.NeedCommand(t, "git", "git")
	return gitCommitAll(t, tree, "CometBFT v1.0.1 from the module zip", "init", "-q")
}

// gitCommitAll commits everything in tree with a subject (after the git
// commands pre, if any) and returns the commit.
func gitCommitAll(t *testing.T, tree, subject string, pre ...string) string {
	t.Helper()
	var out []byte
	steps := [][]string{{"add", "-A"}, {"commit", "-q", "-m", subject}, {"rev-parse", "HEAD"}}
	if len(pre) > 0 {
		steps = append([][]string{pre}, steps...)
	}
	for _, args := range steps {
		var err error
		out, err = exec.Command("git", append([]string{"-C", tree, "-c", "user.name=benchnet", "-c", "user.email=t@benchnet", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return strings.TrimSpace(string(out))
}

// patchCheckTxSpin makes a v1.0.1 tree's kvstore spin d of CPU in every
// CheckTx (also run by PrepareProposal and ProcessProposal for each tx): a
// regression of the saturation point (100 µs cost v1.0.1 about two thirds
// of its capacity here, 2026-11-28).
func patchCheckTxSpin(t *testing.T, tree string, d time.Duration) {
	t.Helper()
	file := filepath.Join(tree, "abci", "example", "kvstore", "kvstore.go")
	code, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	anchor := "func (*Application) CheckTx(_ context.Context, req *types.CheckTxRequest) (*types.CheckTxResponse, error) {\n"
	if !bytes.Contains(code, []byte(anchor)) || !bytes.Contains(code, []byte("\t\"strings\"\n")) {
		t.Fatal("abci/example/kvstore/kvstore.go of v1.0.1 changed shape: update the patch")
	}
	code = bytes.Replace(code, []byte(anchor), []byte(anchor+"\tfor t0 := time.Now(); time.Since(t0) < "+strconv.Itoa(int(d.Microseconds()))+"*time.Microsecond; { // benchnet test patch\n\t}\n"), 1)
	code = bytes.Replace(code, []byte("\t\"strings\"\n"), []byte("\t\"strings\"\n\t\"time\"\n"), 1)
	if err := os.WriteFile(file, code, 0o644); err != nil {
		t.Fatal(err)
	}
}
