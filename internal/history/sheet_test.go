package history

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/history/historytest"
	"github.com/benchnet/benchnet/internal/judge"
)

// sheetRows reads a sheet back: its header and rows as maps.
func sheetRows(t *testing.T, data []byte) ([]string, []map[string]string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return recs[0], rows
}

// TestSheet: one row per run of a sweep, a compare and a parent folder of
// runs, each with its load, build and every judged metric under its unit;
// an unfinished directory below a parent is left out, and said so.
func TestSheet(t *testing.T) {
	const v1, v2 = "cometbft@v1.0.1", "cometbft@v0.38.17"
	root := t.TempDir()
	sweep := filepath.Join(root, "a-sweep")
	historytest.Sweep(t, sweep, v1, historytest.Cell{Rate: 200, TPS: 200}, historytest.Cell{Rate: 400, TPS: 300, Saturated: true})
	cmp := filepath.Join(root, "b-compare")
	historytest.Compare(t, cmp, true, historytest.Variant{Name: "old", Release: v2, TPS: []float64{5, 6}},
		historytest.Variant{Name: "new", Release: v1, TPS: []float64{8, 9}})
	historytest.Run(t, filepath.Join(root, "c-folder", historytest.Stamp(50)+"-quickstart"), v1, 7)
	historytest.Compare(t, filepath.Join(root, "d-unfinished"), false, historytest.Variant{Name: "a", Release: v1, TPS: []float64{5}})

	ms, _ := judge.MetricsOf("cometbft")
	tpsCol := ""
	for _, m := range ms {
		if m.Key == "tps" {
			tpsCol = "tps (" + m.Unit + ")"
		}
	}
	for _, tc := range []struct {
		dir      string
		tps      []string
		rates    []string
		builds   []string
		variants []string
		skipped  int
	}{
		{sweep, []string{"200", "300"}, []string{"200", "400"}, []string{v1, v1}, []string{"", ""}, 0},
		{cmp, []string{"5", "6", "8", "9"}, []string{"6", "6", "6", "6"}, []string{v2, v2, v1, v1}, []string{"old", "old", "new", "new"}, 0},
		{root, []string{"200", "300", "5", "6", "8", "9", "7"}, nil, nil, nil, 1},
	} {
		var buf bytes.Buffer
		skipped, err := Sheet(context.Background(), &buf, tc.dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		if len(skipped) != tc.skipped || (tc.skipped > 0 && !strings.Contains(skipped[0], "d-unfinished")) {
			t.Errorf("%s: skipped %v, want %d", tc.dir, skipped, tc.skipped)
		}
		header, rows := sheetRows(t, buf.Bytes())
		if !slices.Contains(header, tpsCol) || !slices.Contains(header, "latency_p50 (ms)") {
			t.Fatalf("header %v: no %q", header, tpsCol)
		}
		col := func(k string) []string {
			var out []string
			for _, r := range rows {
				out = append(out, r[k])
			}
			return out
		}
		if got := col(tpsCol); !slices.Equal(got, tc.tps) {
			t.Errorf("%s: tps %v, want %v", tc.dir, got, tc.tps)
		}
		if tc.rates != nil && !slices.Equal(col("load_rate_per_conn"), tc.rates) {
			t.Errorf("%s: rates %v, want %v", tc.dir, col("load_rate_per_conn"), tc.rates)
		}
		if tc.builds != nil && !slices.Equal(col("build"), tc.builds) {
			t.Errorf("%s: builds %v, want %v", tc.dir, col("build"), tc.builds)
		}
		if tc.variants != nil && !slices.Equal(col("variant"), tc.variants) {
			t.Errorf("%s: variants %v, want %v", tc.dir, col("variant"), tc.variants)
		}
		for _, r := range rows {
			if r["nodes"] != "4" || r["validators"] != "4" || r["run_dir"] == "" || strings.HasPrefix(r["run_dir"], "/") {
				t.Errorf("%s: row %v: want 4 validators and the run directory relative to its source", tc.dir, r)
			}
		}
	}
	if _, err := Sheet(context.Background(), &bytes.Buffer{}, t.TempDir()); err == nil {
		t.Error("an empty folder gave a sheet")
	}
}

// A gossip series is one row with its kind's metrics: MDR, dissemination
// p50/p99 and the last-delivery hop, under their units.
func TestSheetGossip(t *testing.T) {
	dir := filepath.Join("..", "kinds", "gossipsub", "gossipreport", "testdata", "gossip-m2")
	var buf bytes.Buffer
	if _, err := Sheet(context.Background(), &buf, dir); err != nil {
		t.Fatal(err)
	}
	header, rows := sheetRows(t, buf.Bytes())
	if len(rows) != 1 || rows[0]["node_kind"] != "gossipsub" {
		t.Fatalf("rows %v", rows)
	}
	ms, _ := judge.MetricsOf("gossipsub")
	unit := map[string]string{}
	for _, m := range ms {
		unit[m.Key] = m.Unit
	}
	for _, k := range []string{"mdr", "dissemination_p50", "dissemination_p99", "last_delivery_hop"} {
		col := k + " (" + unit[k] + ")"
		if unit[k] == "" || !slices.Contains(header, col) || rows[0][col] == "" {
			t.Errorf("no %q in the sheet (header %v)", col, header)
		}
	}
}
