package experiment

import (
	"testing"

	"github.com/benchnet/benchnet/examples"
	"github.com/benchnet/benchnet/internal/manifest"
)

// The four colours of compare-app.toml: each label names what the variant
// changes, the base (an empty table) none.
func TestVariantLabels(t *testing.T) {
	data, err := examples.FS.ReadFile("compare-app.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse("compare-app.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	got := VariantLabels(m)
	want := map[string]string{
		"inproc-info":  "(the manifest)",
		"inproc-error": "validator.config.log_level=error",
		"socket-info":  "validator.app=kvstore-socket",
		"socket-error": "validator.app=kvstore-socket, validator.config.log_level=error",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: label %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("labels %v, want %d", got, len(want))
	}
}
