package chainreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestDuplicatesSection: a run with duplicate commits shows the latency
// with and without them; the duplicates' latencies are their later
// blocks' times minus the one send.
func TestDuplicatesSection(t *testing.T) {
	dir := copyDir(t, "testdata/run1")
	d := &rundir.Dir{Path: dir}
	txs, _, err := rundir.TxsCSV.ReadFile(rundir.TxsCSV.Path(d))
	if err != nil {
		t.Fatal(err)
	}
	var bt []rundir.BlockTx
	dups := 0
	for _, tx := range txs {
		if tx.State != rundir.StateCommitted {
			continue
		}
		bt = append(bt, rundir.BlockTx{Height: tx.Height, Hash: tx.Hash})
		if dups < 3 && tx.Height == 5 { // again 4 blocks later (heights 9 and 10 exist)
			bt = append(bt, rundir.BlockTx{Height: tx.Height + 4, Hash: tx.Hash})
			dups++
		}
	}
	if dups != 3 {
		t.Fatalf("fixture has %d txs at height 5", dups)
	}
	if err := rundir.BlockTxsCSV.WriteFile(rundir.BlockTxsCSV.Path(d), bt); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, rundir.ResultsFile))
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["accounting"].(map[string]any)["duplicates"] = dups
	raw, _ = json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, rundir.ResultsFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, all, err := r.duplicateLatencies()
	if err != nil || len(first) != 55 || len(all) != 58 {
		t.Fatalf("first %d, all %d, %v; want 55 and 58", len(first), len(all), err)
	}
	// The three duplicates are the slowest: 4 blocks (4 s here) later.
	if all[57]-first[54] < 2000 {
		t.Errorf("slowest with duplicates %.0f ms vs %.0f ms without", all[57], first[54])
	}
	if _, err := Render(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	for _, s := range []string{"### Duplicate commits", "| every commit, duplicates included | 58 |", "](plots/latency_duplicates.png)"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, page.PlotsDir, "latency_duplicates.png")); err != nil {
		t.Error(err)
	}
}
