package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Series is one line of results that may be compared build against build:
// one scenario on one testbed on one machine. Within it the view splits
// by step, load and emulation profile (the records' own columns).
type Series struct {
	Scenario    string
	TestbedHash string
	MachineKey  string
	CPUModel    string
	CPUs        int
	Builds      int // distinct build labels
	Records     int
	First, Last string // the earliest and latest record's start
}

// Series lists every series in the store, by scenario, testbed and machine.
func (s *Store) Series(ctx context.Context) ([]Series, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scenario, testbed_hash, machine_key, MIN(cpu_model), MIN(cpus),
		COUNT(DISTINCT build), COUNT(*), MIN(started), MAX(started)
		FROM records GROUP BY scenario, testbed_hash, machine_key ORDER BY scenario, testbed_hash, machine_key`)
	if err != nil {
		return nil, fmt.Errorf("history database %s: %w", s.path, err)
	}
	defer rows.Close()
	var out []Series
	for rows.Next() {
		var x Series
		if err := rows.Scan(&x.Scenario, &x.TestbedHash, &x.MachineKey, &x.CPUModel, &x.CPUs, &x.Builds, &x.Records, &x.First, &x.Last); err != nil {
			return nil, fmt.Errorf("history database %s: %w", s.path, err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// Query selects records; an empty field matches every value.
type Query struct {
	Scenario    string
	TestbedHash string
	MachineKey  string
	Source      string
}

func (q Query) where() (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, v string }{
		{"scenario", q.Scenario}, {"testbed_hash", q.TestbedHash}, {"machine_key", q.MachineKey}, {"source", q.Source},
	} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

// Records returns the records q selects with everything stored of them
// (builds, repeats with their values and latency, saturation, probes), in
// the order they were started, then stored.
func (s *Store) Records(ctx context.Context, q Query) ([]*Record, error) {
	where, args := q.where()
	l := &loader{ctx: ctx, db: s.db, where: where, args: args, byID: map[int64]*Record{}}
	l.records()
	l.builds()
	l.runs()
	l.values()
	l.latency()
	l.saturation()
	l.probes()
	if l.err != nil {
		return nil, fmt.Errorf("history database %s: %w", s.path, l.err)
	}
	return l.out, nil
}

// loader reads the records and then each child table of the same
// selection, attaching rows by record id; the first error stops it.
type loader struct {
	ctx   context.Context
	db    *sql.DB
	where string
	args  []any
	out   []*Record
	byID  map[int64]*Record
	err   error
}

// each runs a query over the rows of table belonging to the selection and
// calls scan on every row.
func (l *loader) each(cols, table, order string, scan func(*sql.Rows) error) {
	if l.err != nil {
		return
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE record_id IN (SELECT id FROM records WHERE %s) ORDER BY %s", cols, table, l.where, order)
	if table == "records" {
		q = fmt.Sprintf("SELECT %s FROM records WHERE %s ORDER BY %s", cols, l.where, order)
	}
	rows, err := l.db.QueryContext(l.ctx, q, l.args...)
	if err != nil {
		l.err = err
		return
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			l.err = err
			return
		}
	}
	l.err = rows.Err()
}

func (l *loader) records() {
	l.each(`id, source, part, kind, step, variant, scenario, node_kind, testbed_hash, rate, connections, duration_sec, tx_size,
		latency_emulation, zones, cpu_model, cpus, kernel, memory_mb, governor, benchnet, started, recorded`, "records", "started, id",
		func(rows *sql.Rows) error {
			r := &Record{}
			m := &r.Machine
			if err := rows.Scan(&r.ID, &r.Source, &r.Part, &r.Kind, &r.Step, &r.Variant, &r.Scenario, &r.NodeKind, &r.TestbedHash,
				&r.Load.Rate, &r.Load.Connections, &r.Load.DurationSec, &r.Load.Size, &r.Emulation.Latency, &r.Emulation.Zones,
				&m.CPUModel, &m.CPUs, &m.Kernel, &m.MemoryMB, &m.Governor, &r.Benchnet, &r.Started, &r.Recorded); err != nil {
				return err
			}
			l.out = append(l.out, r)
			l.byID[r.ID] = r
			return nil
		})
}

func (l *loader) builds() {
	l.each(`record_id, release_name, program, reference, build_kind, module, version, commit_hash, dirty, diff_sha256, content_sha256, binary_sha256`,
		"builds", "record_id, release_name, program", func(rows *sql.Rows) error {
			var id int64
			var b Build
			if err := rows.Scan(&id, &b.Release, &b.Program, &b.Reference, &b.Kind, &b.Module, &b.Version, &b.Commit, &b.Dirty,
				&b.DiffSHA256, &b.ContentSHA256, &b.BinarySHA256); err != nil {
				return err
			}
			l.byID[id].Builds = append(l.byID[id].Builds, b)
			return nil
		})
}

func (l *loader) runs() {
	l.each("record_id, repeat, run_dir, valid, excluded", "runs", "record_id, repeat", func(rows *sql.Rows) error {
		var id int64
		r := Run{Values: map[string]float64{}}
		if err := rows.Scan(&id, &r.Repeat, &r.Dir, &r.Valid, &r.Excluded); err != nil {
			return err
		}
		l.byID[id].Runs = append(l.byID[id].Runs, r)
		return nil
	})
}

// run finds a loaded repeat (runs are loaded before their children).
func (l *loader) run(id int64, repeat int) *Run {
	for i, r := range l.byID[id].Runs {
		if r.Repeat == repeat {
			return &l.byID[id].Runs[i]
		}
	}
	return nil
}

func (l *loader) values() {
	l.each("record_id, repeat, metric, value", "run_values", "record_id, repeat, metric", func(rows *sql.Rows) error {
		var id int64
		var rep int
		var k string
		var v float64
		if err := rows.Scan(&id, &rep, &k, &v); err != nil {
			return err
		}
		if r := l.run(id, rep); r != nil {
			r.Values[k] = v
		}
		return nil
	})
}

func (l *loader) latency() {
	l.each("record_id, repeat, n, avg_ms, min_ms, p50_ms, p95_ms, p99_ms, max_ms", "latency", "record_id, repeat", func(rows *sql.Rows) error {
		var id int64
		var rep int
		var x Latency
		if err := rows.Scan(&id, &rep, &x.N, &x.Avg, &x.Min, &x.P50, &x.P95, &x.P99, &x.Max); err != nil {
			return err
		}
		if r := l.run(id, rep); r != nil {
			r.Latency = &x
		}
		return nil
	})
}

func (l *loader) saturation() {
	l.each("record_id, connections, lo, hi, outcome, rule", "saturation", "record_id", func(rows *sql.Rows) error {
		var id int64
		var x Saturation
		if err := rows.Scan(&id, &x.Connections, &x.Lo, &x.Hi, &x.Outcome, &x.Rule); err != nil {
			return err
		}
		l.byID[id].Saturation = &x
		return nil
	})
}

func (l *loader) probes() {
	l.each("record_id, seq, probe, rate, connections, repeat, state, tps, p50_ms, run_dir", "probes", "record_id, seq", func(rows *sql.Rows) error {
		var id int64
		var p Probe
		if err := rows.Scan(&id, &p.Seq, &p.Probe, &p.Rate, &p.Connections, &p.Repeat, &p.State, &p.TPS, &p.P50Ms, &p.Dir); err != nil {
			return err
		}
		l.byID[id].Probes = append(l.byID[id].Probes, p)
		return nil
	})
}
