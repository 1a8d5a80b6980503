package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readme is README.md with the table escapes and ellipses written the way
// cobra's Use lines write them.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer(`\|`, "|", "…", "...").Replace(string(b))
}

// TestReadmeCommands: the README's command table has one row per command
// of the CLI, each written as the command's own usage line (flags may
// follow), and no row for a command that does not exist.
func TestReadmeCommands(t *testing.T) {
	doc := readme(t)
	rows := map[string]string{} // command name → the row's `benchnet …` text
	for _, m := range regexp.MustCompile("(?m)^\\| `benchnet ([^`]+)` \\|").FindAllStringSubmatch(doc, -1) {
		rows[strings.Fields(m[1])[0]] = m[1]
	}
	cmds := map[string]bool{}
	for _, c := range newRootCmd().Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		cmds[c.Name()] = true
		row, ok := rows[c.Name()]
		if !ok {
			t.Errorf("README.md has no command-table row for `benchnet %s`", c.Use)
			continue
		}
		if !strings.HasPrefix(row, c.Use) {
			t.Errorf("README.md row `benchnet %s` does not match the CLI's usage `benchnet %s`", row, c.Use)
		}
	}
	for name := range rows {
		if !cmds[name] {
			t.Errorf("README.md has a row for `benchnet %s`, which the CLI does not have", name)
		}
	}
}

// TestReadmeLayout: the README's layout names every package of the module
// by its path.
func TestReadmeLayout(t *testing.T) {
	doc := readme(t)
	root := "../.."
	pkgs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "runs") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err == nil && dir != "." {
			pkgs[filepath.ToSlash(dir)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s: %v", len(pkgs), root, pkgs)
	}
	for dir := range pkgs {
		if !strings.Contains(doc, "`"+dir+"`") {
			t.Errorf("README.md's layout does not name package %s (as `%s`)", dir, dir)
		}
	}
	// And the other way: every package path the README names exists.
	for _, m := range regexp.MustCompile("`((?:internal|cmd|bench)/[a-z0-9/]+)`").FindAllStringSubmatch(doc, -1) {
		if !pkgs[m[1]] {
			t.Errorf("README.md names package %s, which the tree does not have", m[1])
		}
	}
}
