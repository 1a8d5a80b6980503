package manifest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReleases: local references resolve against the manifest's
// directory, once, and the plan's ReleaseOf (and every variant) sees them;
// unchecked local references are refused rather than guessed.
func TestCheckReleases(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "cometbft")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 0.38.17\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "name = \"t\"\n[node.validator]\ncount = 1\nrelease = \"file:bin/cometbft\"\n[variants.a]\n[variants.b]\nnode.validator.release = \"cometbft@v1.0.1\"\n"
	mf := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(mf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReleaseOf("file:bin/cometbft"); err == nil || !strings.Contains(err.Error(), "must be checked") {
		t.Errorf("unchecked file: reference: %v", err)
	}
	if err := m.CheckReleases(context.Background()); err != nil {
		t.Fatal(err)
	}
	rel, err := m.ReleaseOf("file:bin/cometbft")
	if err != nil {
		t.Fatal(err)
	}
	if rel.File() != bin || !strings.HasPrefix(rel.Version, "v0.38.17+file.") || rel.Name != "cometbft" {
		t.Errorf("file release: %+v", rel)
	}
	if info := m.ReleaseInfo["file:bin/cometbft"]; len(info) == 0 || info[0] != "reference: file:bin/cometbft" {
		t.Errorf("provenance lines: %q", info)
	}
	v, err := m.Variant("a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.ReleaseOf(v.Node["validator"].Release); err != nil || got != rel {
		t.Errorf("variant a sees %+v, %v; want the checked %+v", got, err, rel)
	}
	// A tag nobody checked is still the tag (pure tools, tests).
	if got, err := m.ReleaseOf("cometbft@v0.38.17"); err != nil || got.String() != "cometbft@v0.38.17" || got.Local() {
		t.Errorf("unchecked tag: %+v, %v", got, err)
	}
}
