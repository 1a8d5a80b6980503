package chainreport

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/report"
)

// renameRun copies testdata/run1 and moves its node series to namespace ns:
// samples.csv.gz renamed, the plan's nodes recording it (unless planNS is
// false: a plan that does not say), and the files drop removes deleted so
// the plots fall back on the scraped series.
func renameRun(t *testing.T, ns string, planNS bool, drop ...string) string {
	t.Helper()
	dir := copyDir(t, "testdata/run1")
	path := filepath.Join(dir, "metrics", "samples.csv.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write([]byte(strings.ReplaceAll(raw.String(), ",cometbft_", ","+ns+"_")))
	zw.Close()
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if planNS {
		b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		for _, n := range p["nodes"].([]any) {
			n.(map[string]any)["metrics_namespace"] = ns
		}
		b, _ = json.Marshal(p)
		if err := os.WriteFile(filepath.Join(dir, "plan.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range drop {
		if err := os.Remove(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A run whose nodes export under another namespace (Tendermint Core, or
// instrumentation.namespace) has every plot, read from its own series, and
// the report's text names them. Without blocks.csv and mempool.csv the
// block size and mempool plots fall back on the renamed series too.
func TestNamespacedRunHasNoEmptyPlot(t *testing.T) {
	base, err := EmptyPlots(copyDir(t, "testdata/run1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 0 {
		t.Fatalf("run1 itself has empty plots: %v", base)
	}
	for _, c := range []struct {
		ns   string
		drop []string
	}{
		{"tendermint", nil},
		{"renamed", nil},
		{"tendermint", []string{"mempool.csv", "blocks.csv"}},
	} {
		t.Run(c.ns+strings.Join(c.drop, "-"), func(t *testing.T) {
			dir := renameRun(t, c.ns, true, c.drop...)
			empty, err := EmptyPlots(dir)
			if err != nil {
				t.Fatal(err)
			}
			for title, why := range empty {
				t.Errorf("plot %q empty: %s", title, why)
			}
			if _, err := Render(dir, ""); err != nil {
				t.Fatal(err)
			}
			md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
			if want := "The rate of " + c.ns + "_consensus_height over 60 s"; !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
			if strings.Contains(string(md), "cometbft_consensus") {
				t.Errorf("report.md still names cometbft_ series")
			}
		})
	}
	// A plan without the field is a CometBFT run's: tendermint_ series are
	// not its nodes', and the plots that need them say so.
	empty, err := EmptyPlots(renameRun(t, "tendermint", false))
	if err != nil {
		t.Fatal(err)
	}
	if why := empty["Peers per node"]; !strings.Contains(why, "no cometbft_p2p_peers samples") {
		t.Errorf("old plan with tendermint_ series: peers plot %q", why)
	}
}
