package gossipreport_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/experiment"
	_ "github.com/benchnet/benchnet/internal/kinds" // the kinds whole: report, figures and tables by kind (this package's tests too)
	"github.com/benchnet/benchnet/internal/kinds/gossipsub/gossipreport"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/testenv"
)

// A gossip series compared: the gossip metrics judged, the Whiteblock
// tables, the overlays, and the same bytes on a re-render.
func TestRenderCompareGossip(t *testing.T) {
	a, b := gossipreport.GossipRunDir(t, 2), gossipreport.GossipRunDir(t, 6)
	root, idx, err := experiment.CompareDirs([]experiment.DirVariant{{Name: "m2", Dirs: []string{a}}, {Name: "m6", Dirs: []string{b}}},
		experiment.DefaultCompare(), filepath.Join(t.TempDir(), "out"), false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if idx.NodeKind != "gossipsub" {
		t.Fatalf("node kind %q", idx.NodeKind)
	}
	files, err := report.RenderCompare(root)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(root, report.CompareMarkdownFile))
	for _, s := range []string{"| m6 | MDR (%) |", "dissemination p99 (ms)", "| messages 1/1 |", "### Message delivery ratio",
		"Dissemination time, overlaid", "Max hop (Whiteblock's last-delivery hop), overlaid", "CPU per host", "higher is better for MDR",
		"| m2 | 1 of 1 | synthetic |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("compare.md lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(string(md), "TPS") || strings.Contains(string(md), "No data") {
		t.Errorf("a gossip comparison shows tx figures or empty plots:\n%s", md)
	}
	if pngs := len(files) - 2; pngs != gossipreport.GossipFigureCount(idx) {
		t.Errorf("wrote %d plots, want %d: %v", pngs, gossipreport.GossipFigureCount(idx), files)
	}
	testenv.SameOnRerender(t, files, func() error { _, err := report.RenderCompare(root); return err })
}
