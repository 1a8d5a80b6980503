package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

func TestRunKind(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		want    string
		wantErr string
	}{
		{"plan names it", map[string]string{rundir.Plan: `{"kind":"gossipsub"}`}, "gossipsub", ""},
		{"plan names cometbft despite published.csv", map[string]string{rundir.Plan: `{"kind":"cometbft"}`, rundir.PublishedCSV.Name: "x\n"}, "cometbft", ""},
		{"old plan, published.csv", map[string]string{rundir.Plan: `{"name":"g"}`, rundir.PublishedCSV.Name: "x\n"}, "gossipsub", ""},
		{"old plan", map[string]string{rundir.Plan: `{"name":"q"}`}, "cometbft", ""},
		{"no plan", nil, "cometbft", ""},
		{"broken plan", map[string]string{rundir.Plan: `{"kind":`}, "", "plan.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := RunKind(dir)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("RunKind = %q, %v; want an error naming %s", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("RunKind = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
