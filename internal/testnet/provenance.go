package testnet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
)

// provenanceOf is a run's provenance/<release>-<program>.txt: the
// references as written, where the release came from (the reference check's
// lines: module and version, or a tree's revision, dirty flag and hashes),
// the binary's sha256, then what the cache recorded when it was built.
func provenanceOf(p *plan.Testnet, b node.Binary) (string, error) {
	var sb strings.Builder
	var refs []string
	for _, n := range p.Nodes {
		if n.Release == b.Release && n.Ref != "" && !slices.Contains(refs, n.Ref) {
			refs = append(refs, n.Ref)
		}
	}
	for _, r := range refs {
		fmt.Fprintf(&sb, "reference: %s\n", r)
	}
	fmt.Fprintf(&sb, "release: %s\n", b.Release)
	fmt.Fprintf(&sb, "program: %s\n", b.Program)
	for _, l := range p.Sources[b.Release.String()] {
		if !strings.HasPrefix(l, "reference: ") {
			sb.WriteString(l + "\n")
		}
	}
	sum, err := release.FileSHA256(b.Path)
	if err != nil {
		return "", fmt.Errorf("provenance of %s %s: %w", b.Release, b.Program, err)
	}
	fmt.Fprintf(&sb, "sha256: %s\n", sum)
	prov, err := binaries.Provenance(b.Path)
	if err != nil {
		return "", fmt.Errorf("provenance of %s: %w", b.Release, err)
	}
	sb.WriteString("\n# recorded with the binary:\n")
	sb.WriteString(prov)
	return sb.String(), nil
}
