package manifest

import (
	"context"
	"fmt"
	"sort"

	"github.com/benchnet/benchnet/internal/infra/caps"
	"github.com/benchnet/benchnet/internal/release"
)

// ReleaseOf is the Release of a group's reference: what CheckReleases
// resolved, or, for a tag nobody checked (tests, tools that never build),
// the tag itself. A local or commit reference must have been checked.
func (m *Manifest) ReleaseOf(ref string) (release.Release, error) {
	if r, ok := m.Releases[ref]; ok {
		return r, nil
	}
	p, err := release.Parse(ref)
	if err != nil {
		return release.Release{}, err
	}
	if p.Kind != release.Tag {
		return release.Release{}, fmt.Errorf("%q is a %s reference: it must be checked (Manifest.CheckReleases) before the plan is resolved", ref, p.Kind)
	}
	return release.Release{Name: p.Name, Version: p.Version}, nil
}

// releaseField is one `release =` of the manifest or of a variant.
type releaseField struct {
	field, ref, app string
}

// releaseFields lists every release reference: the groups', then each
// variant's overrides, with the field to blame.
func (m *Manifest) releaseFields() []releaseField {
	var out []releaseField
	for _, name := range m.GroupNames() {
		g := m.Node[name]
		if SchemaOf(g.Kind).Release != nil || m.Schema().Release != nil { // the kind runs one release of its own
			continue
		}
		out = append(out, releaseField{"node." + name + ".release", g.Release, g.App})
	}
	variants := m.VariantNames()
	for _, v := range variants {
		over, _ := m.Variants[v].(map[string]any)
		nodes, _ := over["node"].(map[string]any)
		groups := make([]string, 0, len(nodes))
		for g := range nodes {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			tbl, _ := nodes[g].(map[string]any)
			ref, ok := tbl["release"].(string)
			if !ok {
				continue
			}
			app, _ := tbl["app"].(string)
			if app == "" && m.Node[g] != nil {
				app = m.Node[g].App
			}
			out = append(out, releaseField{"variants." + v + ".node." + g + ".release", ref, app})
		}
	}
	return out
}

// CheckReleases resolves every release reference of the manifest and its
// variants (release.Resolve: a tag on the module proxy, a source tree that
// is a Go module with a cometbft or tendermint main package, a binary that
// answers `version`), relative paths against the manifest's directory. It
// records the results for the plan and reports every bad reference at its
// line. Validate stays pure; commands run this right after loading, before
// anything is built or started.
func (m *Manifest) CheckReleases(ctx context.Context) error {
	if m.Releases == nil {
		m.Releases = map[string]release.Release{}
		m.ReleaseInfo = map[string][]string{}
	}
	var errs Errors
	failed := map[string]error{}
	for _, f := range m.releaseFields() {
		if err, bad := failed[f.ref]; bad {
			errs = append(errs, m.Errorf(f.field, "%v", err))
			continue
		}
		rel, done := m.Releases[f.ref]
		if !done {
			res, err := release.Resolve(ctx, f.ref, m.Dir)
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("check release references: %w", ctx.Err())
				}
				failed[f.ref] = err
				errs = append(errs, m.Errorf(f.field, "%v", err))
				continue
			}
			rel = res.Release
			m.Releases[f.ref] = rel
			m.ReleaseInfo[f.ref] = res.Info
			if rc, ok := caps.Of(m.Infra.Runner); ok && !res.Static && !rc.DynamicBinaries {
				errs = append(errs, m.Errorf(f.field, "%q is not a static binary (it needs a dynamic loader): the %s runner's containers cannot run it; rebuild it with CGO_ENABLED=0 or use runner = \"local\"", f.ref, m.Infra.Runner))
			}
		}
		if rel.File() != "" && f.app == "kvstore-socket" {
			errs = append(errs, m.Errorf(f.field, "%q is a prebuilt node binary without abci-cli, which app = \"kvstore-socket\" needs; use app = \"kvstore\" or a source tree", f.ref))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
