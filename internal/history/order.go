package history

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Release order: the order the view lays a series' builds out in, so that
// a step between two neighbours is a step between two releases.
//
//   - A tag (or a commit the proxy resolved: its pseudo-version) by
//     semver; Tendermint Core's v0.34.x before CometBFT's v0.34.x, which
//     forked from it.
//   - A local tree at the version its code states, after that tag; the
//     trees of one module at one version in commit order, read from a git
//     tree that holds their commits, else in the order they were first
//     recorded.
//   - A prebuilt binary at the version it reports, after the trees.
//   - A mixed testnet, or a build without a version, last, by first record.

// BuildRef is one build of a series: its label (BuildLabel), its binaries
// (of its first record) and when it was first recorded (RFC 3339).
type BuildRef struct {
	Label  string
	Builds []Build
	First  string
}

// CommitOrder places commits of the git tree at tree: a commit's number
// is larger than each of its ancestors'. It fails when the tree cannot
// say (not a git tree, a commit it does not hold).
type CommitOrder func(ctx context.Context, tree string, commits []string) (map[string]int, error)

var commitRE = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// GitCommitOrder numbers each commit by its count of ancestors (git
// rev-list --count): an ancestor always has fewer, so along one line of
// history this is commit order.
func GitCommitOrder(ctx context.Context, tree string, commits []string) (map[string]int, error) {
	out := map[string]int{}
	for _, c := range commits {
		if !commitRE.MatchString(c) {
			return nil, fmt.Errorf("%q is not a commit hash", c)
		}
		cmd := exec.CommandContext(ctx, "git", "-C", tree, "rev-list", "--count", "--end-of-options", c)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("git -C %s rev-list --count %s: %w: %s", tree, c, err, strings.TrimSpace(stderr.String()))
		}
		n, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
		if err != nil {
			return nil, fmt.Errorf("git -C %s rev-list --count %s: %q is not a count", tree, c, stdout.String())
		}
		out[c] = n
	}
	return out, nil
}

// NodeBuild is the one binary a build label stands for (helpers aside);
// ok is false for a mixed testnet or none.
func NodeBuild(bs []Build) (Build, bool) {
	var found *Build
	for i, b := range bs {
		if b.Program == "abci-cli" {
			continue
		}
		if found != nil && (found.Reference != b.Reference || found.Release != b.Release) {
			return Build{}, false
		}
		if found == nil {
			found = &bs[i]
		}
	}
	if found == nil {
		return Build{}, false
	}
	return *found, true
}

// semver is a parsed vMAJOR.MINOR.PATCH[-PRE], build metadata dropped.
type semver struct {
	major, minor, patch int
	pre                 string
}

var semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$`)

func parseSemver(v string) (semver, bool) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return semver{}, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	c, _ := strconv.Atoi(m[3])
	return semver{a, b, c, m[4]}, true
}

// comparePre orders pre-releases as semver does: none after any;
// dot-separated identifiers, numeric ones numerically and before
// alphanumeric ones. A Go pseudo-version's timestamp is such an
// identifier, so commits sort in time between their tags.
func comparePre(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errX := strconv.ParseUint(as[i], 10, 64)
		y, errY := strconv.ParseUint(bs[i], 10, 64)
		var c int
		switch {
		case errX == nil && errY == nil:
			c = cmp.Compare(x, y)
		case errX == nil:
			c = -1
		case errY == nil:
			c = 1
		default:
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

// Build kinds by their place after a tag of the same version.
const (
	rankTag = iota // also a commit: its pseudo-version places it
	rankTree
	rankFile
)

type releaseKey struct {
	versioned bool
	v         semver
	flavour   int // tendermint's v0.34 before cometbft's
	rank      int
	commitPos int
	first     string
	label     string
}

func keyOf(r BuildRef) (releaseKey, Build) {
	k := releaseKey{first: r.First, label: r.Label, flavour: 1}
	b, ok := NodeBuild(r.Builds)
	if !ok {
		return k, b
	}
	name, version, _ := strings.Cut(b.Release, "@")
	v, ok := parseSemver(version)
	if !ok {
		v, ok = parseSemver(b.Version)
	}
	if !ok {
		return k, b
	}
	k.versioned, k.v = true, v
	if name == "tendermint" {
		k.flavour = 0
	}
	switch {
	case b.Kind == "tree" || strings.Contains(version, "+tree."):
		k.rank = rankTree
	case b.Kind == "file" || strings.Contains(version, "+file."):
		k.rank = rankFile
	}
	return k, b
}

func compareKeys(a, b releaseKey) int {
	if a.versioned != b.versioned {
		if a.versioned {
			return -1
		}
		return 1
	}
	if a.versioned {
		if c := cmp.Or(cmp.Compare(a.v.major, b.v.major), cmp.Compare(a.v.minor, b.v.minor), cmp.Compare(a.flavour, b.flavour),
			cmp.Compare(a.v.patch, b.v.patch), comparePre(a.v.pre, b.v.pre), cmp.Compare(a.rank, b.rank), cmp.Compare(a.commitPos, b.commitPos)); c != 0 {
			return c
		}
	}
	return cmp.Or(strings.Compare(a.first, b.first), strings.Compare(a.label, b.label))
}

// treeDir is the directory a tree reference names, "" for another kind.
func treeDir(ref string) string {
	if p, ok := strings.CutPrefix(ref, "path:"); ok {
		return p
	}
	if ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || strings.HasPrefix(ref, "/") {
		return ref
	}
	return ""
}

// SortReleases puts refs in release order (above) and returns a note for
// each group of tree builds: how its commits were ordered. commits nil
// orders trees by first record.
func SortReleases(ctx context.Context, refs []BuildRef, commits CommitOrder) []string {
	keys := make(map[string]releaseKey, len(refs))
	trees := map[string][]Build{} // module → its tree builds with a commit
	for _, r := range refs {
		k, b := keyOf(r)
		keys[r.Label] = k
		if k.versioned && k.rank == rankTree && b.Commit != "" {
			mod := cmp.Or(b.Module, strings.SplitN(b.Release, "@", 2)[0])
			trees[mod] = append(trees[mod], b)
		}
	}
	var notes []string
	for _, mod := range slices.Sorted(maps.Keys(trees)) {
		bs := trees[mod]
		if len(bs) < 2 {
			continue
		}
		pos, dir := treeOrder(ctx, bs, commits)
		if pos == nil {
			notes = append(notes, fmt.Sprintf("the %d tree builds of %s are in the order they were first recorded: no git tree at hand holds their commits", len(bs), mod))
			continue
		}
		notes = append(notes, fmt.Sprintf("the %d tree builds of %s are in commit order (git tree %s)", len(bs), mod, dir))
		for _, r := range refs {
			k := keys[r.Label]
			if b, ok := NodeBuild(r.Builds); ok && k.rank == rankTree && pos[b.Commit] > 0 {
				k.commitPos = pos[b.Commit]
				keys[r.Label] = k
			}
		}
	}
	slices.SortStableFunc(refs, func(a, b BuildRef) int { return compareKeys(keys[a.Label], keys[b.Label]) })
	return notes
}

// treeOrder asks each directory the builds' references name for their
// commits' order; nil when none holds them all.
func treeOrder(ctx context.Context, bs []Build, commits CommitOrder) (map[string]int, string) {
	if commits == nil {
		return nil, ""
	}
	var cs, dirs []string
	for _, b := range bs {
		if !slices.Contains(cs, b.Commit) {
			cs = append(cs, b.Commit)
		}
		if d := treeDir(b.Reference); d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		pos, err := commits(ctx, d, cs)
		if err != nil {
			continue
		}
		// Shifted by one so that 0 keeps meaning "not placed".
		out := map[string]int{}
		for c, n := range pos {
			out[c] = n + 1
		}
		return out, d
	}
	return nil, ""
}

// OrderBy puts the builds order names first, in its order, and the rest
// after them as they were. A name matches a build by its label, a
// binary's reference or release, or a prefix of 7 hex digits or more of
// its commit; one that matches none or several is an error naming the
// builds.
func OrderBy(refs []BuildRef, order []string) (ordered []BuildRef, unnamed []string, err error) {
	taken := make([]bool, len(refs))
	for _, name := range order {
		var hits []int
		for i, r := range refs {
			if matches(r, name) {
				hits = append(hits, i)
			}
		}
		switch {
		case len(hits) == 0:
			return nil, nil, fmt.Errorf("%q names no build of this series (its builds: %s)", name, labels(refs))
		case len(hits) > 1:
			var ls []string
			for _, i := range hits {
				ls = append(ls, refs[i].Label)
			}
			return nil, nil, fmt.Errorf("%q names %d builds: %s", name, len(hits), strings.Join(ls, ", "))
		case taken[hits[0]]:
			return nil, nil, fmt.Errorf("%q names %s, already placed", name, refs[hits[0]].Label)
		}
		taken[hits[0]] = true
		ordered = append(ordered, refs[hits[0]])
	}
	for i, r := range refs {
		if !taken[i] {
			ordered = append(ordered, r)
			unnamed = append(unnamed, r.Label)
		}
	}
	return ordered, unnamed, nil
}

func matches(r BuildRef, name string) bool {
	if name == r.Label {
		return true
	}
	for _, b := range r.Builds {
		if b.Program == "abci-cli" {
			continue
		}
		if name == b.Reference || name == b.Release || (commitRE.MatchString(name) && b.Commit != "" && strings.HasPrefix(b.Commit, name)) {
			return true
		}
	}
	return false
}

func labels(refs []BuildRef) string {
	var ls []string
	for _, r := range refs {
		ls = append(ls, r.Label)
	}
	return strings.Join(ls, ", ")
}
