package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// thirdKind is a node kind no generic package names: registered here as a
// kind's leaf package would register it.
const thirdKind = "third-kind"

// A kind the frame does not know by name is accepted once registered and
// recorded in plan.json, where every later stage reads it (RunKind);
// the default kind keeps its plans as they were (no kind field).
func TestPlanRecordsRegisteredKind(t *testing.T) {
	if !slices.Contains(manifest.Kinds(), thirdKind) {
		manifest.RegisterKind(thirdKind, manifest.Schema{})
	}
	src := `name = "k"
[network]
subnet = "10.213.9.0/24"
[node.validator]
count = 2
kind = "%s"
release = "cometbft@v1.0.1"
`
	for _, tc := range []struct{ kind, want, field string }{
		{thirdKind, thirdKind, `"kind":"third-kind"`},
		{manifest.KindCometBFT, manifest.KindCometBFT, ""},
	} {
		m, err := manifest.Parse("k.toml", []byte(strings.Replace(src, "%s", tc.kind, 1)))
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		tn, err := Resolve(m)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(tn)
		if err != nil {
			t.Fatal(err)
		}
		if hasField := strings.Contains(string(data), `"kind":`); hasField != (tc.field != "") || !strings.Contains(string(data), tc.field) {
			t.Errorf("%s: plan.json %s, want the field %q", tc.kind, data[:min(len(data), 120)], tc.field)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, rundir.Plan), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := RunKind(dir); err != nil || got != tc.want {
			t.Errorf("%s: RunKind = %q, %v; want %q", tc.kind, got, err, tc.want)
		}
	}
	// An unregistered kind is refused at its line, naming the known ones.
	_, err := manifest.Parse("k.toml", []byte(strings.Replace(src, "%s", "fourth", 1)))
	if err == nil || !strings.Contains(err.Error(), `k.toml:6: node.validator.kind: "fourth": want one of`) || !strings.Contains(err.Error(), thirdKind) {
		t.Errorf("unregistered kind: %v", err)
	}
}
