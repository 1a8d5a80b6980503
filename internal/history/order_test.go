package history

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func tagRef(rel, first string) BuildRef {
	name, v, _ := strings.Cut(rel, "@")
	mod := "github.com/cometbft/cometbft"
	if name == "tendermint" {
		mod = "github.com/tendermint/tendermint"
	}
	return BuildRef{Label: rel, First: first, Builds: []Build{
		{Release: rel, Program: "cometbft", Reference: rel, Kind: "tag", Module: mod, Version: v},
		{Release: rel, Program: "abci-cli", Reference: rel, Kind: "tag", Module: mod, Version: v},
	}}
}

// treeRef is a build of the source tree at dir, at commit, labelled as
// the view labels it.
func treeRef(dir, version, commit, first string) BuildRef {
	return BuildRef{Label: dir + "@" + commit, First: first, Builds: []Build{{Release: "cometbft@" + version + "+tree." + commit, Program: "cometbft",
		Reference: dir, Kind: "tree", Module: "github.com/cometbft/cometbft", Version: version, Commit: commit}}}
}

func labelsOf(refs []BuildRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Label)
	}
	return out
}

// TestSortReleases: tags by semver, Tendermint Core's v0.34 before
// CometBFT's, pre-releases and a proxy commit's pseudo-version between
// their tags, a tree and a binary after the tag of their version, a mixed
// testnet and a build without a version last; whatever the input order.
func TestSortReleases(t *testing.T) {
	commit := BuildRef{Label: "cometbft@4ced46d3", First: "2026-01-01T00:00:00Z", Builds: []Build{{Release: "cometbft@v0.38.18-0.20250101120000-4ced46d3aa11",
		Program: "cometbft", Reference: "cometbft@4ced46d3", Kind: "commit", Version: "v0.38.18-0.20250101120000-4ced46d3aa11", Commit: "4ced46d3aa11"}}}
	file := BuildRef{Label: "file:/bin/cometbft#abc", Builds: []Build{{Release: "cometbft@v1.0.1+file.abc", Program: "cometbft", Reference: "file:/bin/cometbft", Kind: "file", Version: "v1.0.1"}}}
	mixed := BuildRef{Label: "cometbft@v0.38.17 + cometbft@v1.0.1", First: "2026-01-02T00:00:00Z", Builds: append(tagRef("cometbft@v0.38.17", "").Builds, tagRef("cometbft@v1.0.1", "").Builds...)}
	unknown := BuildRef{Label: "(unknown build)", First: "2026-01-01T00:00:00Z"}
	want := []BuildRef{
		tagRef("tendermint@v0.34.22", "2026-03-01T00:00:00Z"),
		tagRef("cometbft@v0.34.35", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v0.37.15", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v0.38.17", "2026-02-01T00:00:00Z"),
		commit,
		tagRef("cometbft@v0.38.18", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v0.40.0", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v1.0.0-alpha.2", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v1.0.0-rc.1", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v1.0.0", "2026-01-01T00:00:00Z"),
		tagRef("cometbft@v1.0.1", "2026-01-05T00:00:00Z"),
		treeRef("./cometbft", "v1.0.1", "0123456789ab", "2026-01-01T00:00:00Z"),
		file,
		tagRef("cometbft@v1.0.2", "2026-01-01T00:00:00Z"),
		unknown,
		mixed,
	}
	for _, tc := range []struct {
		name    string
		shuffle func([]BuildRef)
	}{
		{"reversed", slices.Reverse[[]BuildRef]},
		{"rotated", func(s []BuildRef) { slices.Reverse(s[:7]); slices.Reverse(s[7:]); slices.Reverse(s) }},
		{"as given", func([]BuildRef) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(want)
			tc.shuffle(got)
			SortReleases(context.Background(), got, nil)
			if !slices.Equal(labelsOf(got), labelsOf(want)) {
				t.Errorf("order:\n got %q\nwant %q", labelsOf(got), labelsOf(want))
			}
		})
	}
}

// TestSortReleasesTrees: the builds of one tree are in commit order when
// a git tree holds their commits (whatever order they were recorded in),
// in first-record order when none does, and the note says which.
func TestSortReleasesTrees(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	var commits []string
	for i := 0; i < 3; i++ {
		git("commit", "-q", "--allow-empty", "-m", "c")
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	// Recorded newest commit first: first-record order is the reverse of
	// commit order.
	refs := func() []BuildRef {
		return []BuildRef{
			tagRef("cometbft@v1.0.1", "2026-01-01T00:00:00Z"),
			treeRef(repo, "v1.0.1", commits[2], "2026-01-02T00:00:00Z"),
			treeRef(repo, "v1.0.1", commits[1], "2026-01-03T00:00:00Z"),
			treeRef(repo, "v1.0.1", commits[0][:12], "2026-01-04T00:00:00Z"),
			tagRef("cometbft@v0.38.17", "2026-01-05T00:00:00Z"),
		}
	}
	byCommit := []string{"cometbft@v0.38.17", "cometbft@v1.0.1", repo + "@" + commits[0][:12], repo + "@" + commits[1], repo + "@" + commits[2]}
	byTime := []string{"cometbft@v0.38.17", "cometbft@v1.0.1", repo + "@" + commits[2], repo + "@" + commits[1], repo + "@" + commits[0][:12]}
	failing := func(context.Context, string, []string) (map[string]int, error) { return nil, errors.New("no") }
	for _, tc := range []struct {
		name  string
		order CommitOrder
		dir   string // the trees' reference
		want  []string
		note  string
	}{
		{"git tree", GitCommitOrder, repo, byCommit, "in commit order (git tree " + repo + ")"},
		{"no commit order", nil, repo, byTime, "in the order they were first recorded"},
		{"tree cannot say", failing, repo, byTime, "in the order they were first recorded"},
		{"tree gone", GitCommitOrder, filepath.Join(repo, "gone"), byTime, "in the order they were first recorded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := refs()
			want := tc.want
			if tc.dir != repo {
				for i := range rs {
					for j := range rs[i].Builds {
						if rs[i].Builds[j].Kind == "tree" {
							rs[i].Builds[j].Reference = tc.dir
						}
					}
				}
			}
			notes := SortReleases(context.Background(), rs, tc.order)
			if !slices.Equal(labelsOf(rs), want) {
				t.Errorf("order:\n got %q\nwant %q", labelsOf(rs), want)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
				t.Errorf("notes %q, want one with %q", notes, tc.note)
			}
		})
	}
	if _, err := GitCommitOrder(context.Background(), repo, []string{"--all"}); err == nil {
		t.Error("GitCommitOrder took an option for a commit")
	}
}

// TestOrderBy: --order puts the builds it names first, by label,
// reference or commit prefix, the rest after as they were; a name that
// matches none, several or an already placed build is refused.
func TestOrderBy(t *testing.T) {
	refs := []BuildRef{
		tagRef("cometbft@v0.38.17", ""),
		tagRef("cometbft@v1.0.1", ""),
		treeRef("./cometbft", "v1.0.1", "aaaaaaa11111", ""),
		treeRef("./cometbft", "v1.0.1", "bbbbbbb22222", ""),
	}
	for _, tc := range []struct {
		name    string
		order   []string
		want    []string
		unnamed []string
		err     string
	}{
		{"all", []string{"./cometbft@bbbbbbb22222", "aaaaaaa", "cometbft@v1.0.1", "cometbft@v0.38.17"},
			[]string{"./cometbft@bbbbbbb22222", "./cometbft@aaaaaaa11111", "cometbft@v1.0.1", "cometbft@v0.38.17"}, nil, ""},
		{"some", []string{"cometbft@v1.0.1"},
			[]string{"cometbft@v1.0.1", "cometbft@v0.38.17", "./cometbft@aaaaaaa11111", "./cometbft@bbbbbbb22222"},
			[]string{"cometbft@v0.38.17", "./cometbft@aaaaaaa11111", "./cometbft@bbbbbbb22222"}, ""},
		{"unknown", []string{"cometbft@v0.37.15"}, nil, nil, `"cometbft@v0.37.15" names no build of this series (its builds: cometbft@v0.38.17, cometbft@v1.0.1, ./cometbft@aaaaaaa11111, ./cometbft@bbbbbbb22222)`},
		{"ambiguous", []string{"./cometbft"}, nil, nil, `"./cometbft" names 2 builds`},
		{"twice", []string{"cometbft@v1.0.1", "cometbft@v1.0.1"}, nil, nil, "already placed"},
		{"short commit", []string{"aaaaaa"}, nil, nil, "names no build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, unnamed, err := OrderBy(refs, tc.order)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(labelsOf(got), tc.want) || !slices.Equal(unnamed, tc.unnamed) {
				t.Errorf("got %q (unnamed %q), want %q (unnamed %q)", labelsOf(got), unnamed, tc.want, tc.unnamed)
			}
		})
	}
}
