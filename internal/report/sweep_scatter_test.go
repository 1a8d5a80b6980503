package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A grid sweep whose two done cells (c = 1 and c = 4) are copies of run1:
// the scatter shows both cells' committed txs, one series per c, and
// re-renders byte-identically; the stored sweep1 (no cell directories)
// has no such section.
func TestSweepScatter(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "sweep1"))
	x, err := rundir.SweepRecord.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if blocks, _, err := sweepScatter(dir, x); err != nil || blocks != nil {
		t.Fatalf("no cell directories: %v, %d blocks", err, len(blocks))
	}
	run1 := copyDir(t, chainRun)
	var done []int
	for i, c := range x.Cells {
		if c.Status == rundir.CellDone {
			done = append(done, i)
		}
	}
	if len(done) < 2 {
		t.Fatalf("sweep1 has %d done cells", len(done))
	}
	for k, i := range done[:2] {
		rel := filepath.Join("cells", x.Cells[i].ID)
		if err := os.Rename(copyDir(t, run1), filepath.Join(dir, rel)); err != nil {
			if err := os.MkdirAll(filepath.Join(dir, "cells"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(copyDir(t, run1), filepath.Join(dir, rel)); err != nil {
				t.Fatal(err)
			}
		}
		x.Cells[i].RunDir, x.Cells[i].Connections = rel, []int{1, 4}[k]
	}
	for _, i := range done[2:] {
		x.Cells[i].RunDir = ""
	}
	if err := rundir.SweepRecord.Write(dir, x); err != nil {
		t.Fatal(err)
	}
	blocks, pngs, err := sweepScatter(dir, x)
	if err != nil || len(blocks) == 0 || len(pngs[sweepScatterFile]) == 0 {
		t.Fatalf("scatter: %v, %d blocks", err, len(blocks))
	}
	// Twice run1's committed txs with a headline latency, over two cells.
	d := &rundir.Dir{Path: run1}
	res, err := d.ReadResults()
	if err != nil {
		t.Fatal(err)
	}
	txs, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, tx := range txs {
		if tx.State == "committed" && (tx.HasNext && res.LatencyBlock == "H+1" || tx.HasLatency && res.LatencyBlock != "H+1") {
			want++
		}
	}
	if p := blocks[1].(page.Para); want == 0 || !strings.HasPrefix(p.Text, fmt.Sprintf("%d committed txs of 2 cells", 2*want)) {
		t.Errorf("%q, want %d txs of 2 cells", p.Text, 2*want)
	}
	if img := blocks[len(blocks)-1].(page.Image); !strings.Contains(img.Alt, "every cell") {
		t.Errorf("image %q", img.Alt)
	}
	if _, err := RenderSweep(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, SweepMarkdownFile))
	if !bytes.Contains(md, []byte("## Every transaction's latency")) {
		t.Error("sweep.md has no scatter section")
	}
	png, _ := os.ReadFile(filepath.Join(dir, page.PlotsDir, sweepScatterFile))
	if _, err := RenderSweep(dir); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, page.PlotsDir, sweepScatterFile))
	if len(png) == 0 || !bytes.Equal(png, again) {
		t.Error("the scatter is missing or changed on re-render")
	}
}
