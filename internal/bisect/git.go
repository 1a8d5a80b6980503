package bisect

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// git runs git in tree with an argument list (no shell) and returns its
// trimmed output.
func git(ctx context.Context, tree string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", tree}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Range lists good and the commits after it up to bad, oldest first,
// along bad's first-parent line (a merge is one step, as git bisect
// --first-parent sees it), each with its subject line.
func Range(ctx context.Context, tree, good, bad string) ([]Commit, error) {
	g, err := git(ctx, tree, "rev-parse", "--verify", "--end-of-options", good+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("--good %s: %w", good, err)
	}
	b, err := git(ctx, tree, "rev-parse", "--verify", "--end-of-options", bad+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("--bad %s: %w", bad, err)
	}
	if _, err := git(ctx, tree, "merge-base", "--is-ancestor", g, b); err != nil {
		return nil, fmt.Errorf("--good %s is not an ancestor of --bad %s", good, bad)
	}
	out, err := git(ctx, tree, "log", "--reverse", "--first-parent", "--ancestry-path", "--format=%H %s", g+".."+b)
	if err != nil {
		return nil, err
	}
	subj, err := git(ctx, tree, "log", "-1", "--format=%s", g)
	if err != nil {
		return nil, err
	}
	cs := []Commit{{SHA: g, Subject: subj}}
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		sha, s, _ := strings.Cut(l, " ")
		cs = append(cs, Commit{SHA: sha, Subject: s})
	}
	if cs[len(cs)-1].SHA != b {
		return nil, fmt.Errorf("--bad %s is not on the first-parent line from --good %s", bad, good)
	}
	return cs, nil
}

// Worktree checks sha out, detached, at path (a linked worktree of tree:
// the tree itself is left as it is). The returned func removes it.
func Worktree(ctx context.Context, tree, sha, path string) (func() error, error) {
	if _, err := git(ctx, tree, "worktree", "add", "--force", "--detach", path, sha); err != nil {
		return nil, err
	}
	return func() error {
		_, err := git(context.Background(), tree, "worktree", "remove", "--force", path)
		return err
	}, nil
}
