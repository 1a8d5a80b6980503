package analyze_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/analyze"
	_ "github.com/benchnet/benchnet/internal/kinds" // registers every kind's analysis
	"github.com/benchnet/benchnet/internal/rundir"
)

// Run dispatches on plan.json's kind to the kind's registered analysis;
// an unknown kind names the ones built in.
func TestRunDispatchesOnKind(t *testing.T) {
	var got string
	analyze.Register("test-kind", analyze.Kind{
		Analyze: func(d *rundir.Dir) (*rundir.Results, error) {
			got = d.Path
			return &rundir.Results{RunID: "r1"}, nil
		},
		Summary: func(*rundir.Results) string { return "test summary" },
	})
	for _, k := range []string{"cometbft", "gossipsub", "test-kind"} {
		if _, err := analyze.For(k); err != nil {
			t.Errorf("kind %s: %v", k, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), []byte(`{"kind":"test-kind"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, k, err := analyze.Run(&rundir.Dir{Path: dir})
	if err != nil || got != dir || res.RunID != "r1" || k.Summary(res) != "test summary" {
		t.Errorf("Run: results %+v, analysed %q, err %v; want the test kind's analysis of %s", res, got, err, dir)
	}

	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), []byte(`{"kind":"third"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = analyze.Run(&rundir.Dir{Path: dir})
	if err == nil || !strings.Contains(err.Error(), `no analysis for node kind "third"`) || !strings.Contains(err.Error(), "cometbft, gossipsub, test-kind") {
		t.Errorf("unknown kind: err %v", err)
	}
}
