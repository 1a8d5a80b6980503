// Package testrel is how tests find cached release binaries: through the
// binary cache's own Path (which honours BENCHNET_CACHE and XDG_CACHE_HOME),
// skipping — failing under CI — when one is not built. Tests never build
// releases; `benchnet setup --tests` does.
package testrel

import (
	"testing"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testenv"
)

// NeedTool marks t as an integration test (testenv.Integration: a test that
// runs a release binary is one) and returns the cached path of tool of rel,
// or skips (fails under CI).
func NeedTool(t testing.TB, rel release.Release, tool string) string {
	t.Helper()
	testenv.Integration(t)
	return needFile(t, rel, tool)
}

func needFile(t testing.TB, rel release.Release, tool string) string {
	t.Helper()
	return testenv.NeedFile(t, binaries.Path(rel, tool),
		"run `go run ./cmd/benchnet setup --tests` first (or `benchnet build "+rel.String()+"`)")
}

// NeedCometBFT is NeedTool for the cometbft binary of cometbft@version.
func NeedCometBFT(t testing.TB, version string) (release.Release, string) {
	t.Helper()
	rel := release.Release{Name: "cometbft", Version: version}
	return rel, NeedTool(t, rel, "cometbft")
}
