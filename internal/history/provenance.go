package history

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// readBuilds reads a run directory's provenance files
// (rundir.ProvenanceDir): their headers say which bytes ran. None (a run
// written before them): nil.
func readBuilds(dir string) ([]Build, error) {
	files, err := filepath.Glob(filepath.Join(dir, rundir.ProvenanceDir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Build
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		if b, ok := parseProvenance(string(data)); ok && !containsBuild(out, b) {
			out = append(out, b)
		}
	}
	return out, nil
}

// pseudoCommit finds the commit of a Go pseudo-version
// (v0.0.0-20240101120000-abcdef123456).
var pseudoCommit = regexp.MustCompile(`-\d{14}-([0-9a-f]{12})(\+incompatible)?$`)

// parseProvenance reads one provenance file's header; ok is false when it
// names no release.
func parseProvenance(text string) (Build, bool) {
	refs, kv := rundir.ProvenanceHeader(text)
	first := func(k string) string { // "HASH (N files …)" -> HASH
		f := strings.Fields(kv[k])
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	b := Build{
		Release: kv["release"], Program: kv["program"], Reference: strings.Join(refs, ", "), Kind: kv["kind"],
		Module: kv["module"], Version: first("version"), Commit: kv["vcs.revision"], Dirty: kv["vcs.dirty"] == "true",
		DiffSHA256: kv["vcs.diff.sha256"], ContentSHA256: first("content.sha256"), BinarySHA256: kv["sha256"],
	}
	if m := pseudoCommit.FindStringSubmatch(b.Version); b.Commit == "" && m != nil {
		b.Commit = m[1]
	}
	return b, b.Release != ""
}
