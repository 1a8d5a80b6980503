package history

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// sheetFixed are the sheet's leading columns: where the run sits (the
// directory added, its part, the experiment's kind, QA step and variant),
// the testbed (its scenario, canonical hash and the plan's shape), the
// load, the build, and the run's own standing.
var sheetFixed = []string{
	"source", "part", "kind", "step", "variant", "scenario", "node_kind", "testbed",
	"nodes", "validators", "topology", "zones",
	"load_connections", "load_rate_per_conn", "load_duration_s", "load_size_bytes",
	"build", "repeat", "run_dir", "valid", "excluded",
	"latency_n", "latency_avg (ms)", "latency_p50 (ms)", "latency_p95 (ms)", "latency_p99 (ms)", "latency_max (ms)",
}

// Sheet writes one sheet across runs: one row per run of dir (a run, a
// soak, a sweep's cells, a compare's runs, a QA's runs) or of every such
// directory below a parent folder, with every judged metric of the runs'
// kinds as a column ("key (unit)": a gossip series has MDR, dissemination
// p50/p99 and the last-delivery hop). A row is what `benchnet history`
// records (FromRunDir). It returns what was left out (unfinished directories, failed
// cells) with why.
func Sheet(ctx context.Context, w io.Writer, dir string) (skipped []string, err error) {
	batches, skipped, err := batchesUnder(ctx, dir)
	if err != nil {
		return skipped, err
	}
	if len(batches) == 0 {
		return skipped, fmt.Errorf("%s holds no finished run, sweep, compare, soak or qa directory", dir)
	}
	type row struct {
		rec *Record
		run Run
	}
	var rows []row
	kinds := map[string]bool{}
	keys := map[string]bool{}
	for _, b := range batches {
		skipped = append(skipped, b.Skipped...)
		for _, rec := range b.Records {
			for _, r := range rec.Runs {
				rows = append(rows, row{rec, r})
				kinds[rec.NodeKind] = true
				for k := range r.Values {
					keys[k] = true
				}
			}
		}
	}
	cols, units := metricColumns(kinds, keys)
	header := slices.Clone(sheetFixed)
	for i, k := range cols {
		if units[i] != "" {
			k += " (" + units[i] + ")"
		}
		header = append(header, k)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return skipped, err
	}
	shapes := map[string]shape{}
	for _, x := range rows {
		if err := ctx.Err(); err != nil {
			return skipped, err
		}
		sh, ok := shapes[x.run.Dir]
		if !ok {
			sh = shapeOf(x.run.Dir)
			shapes[x.run.Dir] = sh
		}
		rec, r := x.rec, x.run
		line := []string{
			rec.Source, rec.Part, rec.Kind, rec.Step, rec.Variant, rec.Scenario, rec.NodeKind, rec.TestbedHash,
			num(sh.nodes), num(sh.validators), sh.topology, sh.zones,
			num(rec.Load.Connections), flt(rec.Load.Rate), flt(rec.Load.DurationSec), num(rec.Load.Size),
			BuildLabel(rec.Builds), num(r.Repeat), experiment.RelTo(rec.Source, r.Dir), strconv.FormatBool(r.Valid), r.Excluded,
		}
		if l := r.Latency; l != nil {
			line = append(line, num(l.N), flt(l.Avg), flt(l.P50), flt(l.P95), flt(l.P99), flt(l.Max))
		} else {
			line = append(line, "", "", "", "", "", "")
		}
		for _, k := range cols {
			if v, ok := r.Values[k]; ok {
				line = append(line, flt(v))
			} else {
				line = append(line, "")
			}
		}
		if err := cw.Write(line); err != nil {
			return skipped, err
		}
	}
	cw.Flush()
	return skipped, cw.Error()
}

// metricColumns orders the metric columns: each kind's judged metrics in
// its table's order (kinds sorted), then any other value a record holds
// (a QA pair's busy_tps, a soak's fit), sorted; with their units.
func metricColumns(kinds, keys map[string]bool) (cols, units []string) {
	seen := map[string]bool{}
	ks := make([]string, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, kind := range ks {
		ms, _ := judge.MetricsOf(kind)
		for _, m := range ms {
			if seen[m.Key] || !keys[m.Key] {
				continue
			}
			seen[m.Key] = true
			cols, units = append(cols, m.Key), append(units, m.Unit)
		}
	}
	var rest []string
	for k := range keys {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		cols, units = append(cols, k), append(units, "")
	}
	return cols, units
}

// shape is the plan's testbed in a few columns.
type shape struct {
	nodes, validators int
	topology, zones   string
}

func shapeOf(runDir string) shape {
	t, err := plan.Read(runDir)
	if err != nil {
		return shape{}
	}
	s := shape{nodes: len(t.Nodes), topology: t.Topology, zones: t.Network.Zones}
	for _, n := range t.Nodes {
		if n.Role == "validator" {
			s.validators++
		}
	}
	return s
}

// batchesUnder reads dir as the history does; a folder benchnet did not
// write is searched for directories it did (a parent of runs), depth
// first, in name order.
func batchesUnder(ctx context.Context, dir string) ([]*Batch, []string, error) {
	if benchnetDir(dir) {
		b, err := FromRunDir(ctx, dir)
		var un *UnfinishedError
		if errors.As(err, &un) {
			return nil, []string{un.Error()}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		return []*Batch{b}, nil, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var out []*Batch
	var skipped []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		bs, sk, err := batchesUnder(ctx, filepath.Join(dir, e.Name()))
		if err != nil {
			return out, skipped, err
		}
		out, skipped = append(out, bs...), append(skipped, sk...)
	}
	return out, skipped, nil
}

// benchnetDir: dir holds one of the records FromRunDir reads.
func benchnetDir(dir string) bool {
	for _, f := range []string{rundir.QAFile, rundir.CompareFile, rundir.SweepFile, rundir.SoakVariantsFile, rundir.ResultsFile, rundir.Plan} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func num(n int) string { return strconv.Itoa(n) }

func flt(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
