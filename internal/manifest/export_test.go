package manifest

import "github.com/benchnet/benchnet/internal/release"

// CheckReleasesOffline records what CheckReleases would for every reference
// that is not a tag, without the IO (resolving a commit needs the module
// proxy, a tree or binary the disk): a stand-in release of the reference's
// name. The fuzzer uses it to keep its invariant, "a manifest that parses
// resolves into a plan", for commit, tree and file references too.
func CheckReleasesOffline(m *Manifest) {
	if m.Releases == nil {
		m.Releases = map[string]release.Release{}
	}
	for _, f := range m.releaseFields() {
		p, err := release.Parse(f.ref)
		if err != nil || p.Kind == release.Tag {
			continue
		}
		name := p.Name
		if name == "" {
			name = "cometbft"
		}
		m.Releases[f.ref] = release.Release{Name: name, Version: "v0.0.0+fuzz"}
	}
}
