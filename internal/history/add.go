package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Outcome is what Add did with a record.
type Outcome int

const (
	Added    Outcome = iota + 1 // a new record
	Extended                    // the record was there; repeats it lacked were added
	Skipped                     // the record and every repeat were there
)

func (o Outcome) String() string {
	switch o {
	case Added:
		return "added"
	case Extended:
		return "extended"
	case Skipped:
		return "skipped"
	}
	return "?"
}

// testHookInTx, when set (tests only), is called inside Add's transaction
// after the record's rows are written and before the commit.
var testHookInTx func()

// Add writes rec in one transaction: all of it or, when the process dies
// or an error comes first, none of it. A record already stored (same
// Source and Part) is not written again; only its missing repeats are
// (an adaptive compare resumed after it was first recorded). newRuns
// counts the repeats written. rec.ID is set.
func (s *Store) Add(ctx context.Context, rec *Record) (o Outcome, newRuns int, err error) {
	if rec.Source == "" {
		return 0, 0, errors.New("history: a record without a source directory")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("history database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	fail := func(err error) (Outcome, int, error) {
		return 0, 0, fmt.Errorf("history database %s: record %s %q: %w", s.path, rec.Source, rec.Part, err)
	}
	o = Added
	err = tx.QueryRowContext(ctx, `SELECT id FROM records WHERE source = ? AND part = ?`, rec.Source, rec.Part).Scan(&rec.ID)
	switch {
	case err == nil:
		o = Skipped
	case errors.Is(err, sql.ErrNoRows):
		if err := insertRecord(ctx, tx, rec); err != nil {
			return fail(err)
		}
	default:
		return fail(err)
	}
	for _, r := range rec.Runs {
		added, err := insertRun(ctx, tx, rec.ID, r)
		if err != nil {
			return fail(err)
		}
		if added {
			newRuns++
		}
	}
	if o == Skipped && newRuns > 0 {
		o = Extended
	}
	if testHookInTx != nil {
		testHookInTx()
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return o, newRuns, nil
}

func insertRecord(ctx context.Context, tx *sql.Tx, rec *Record) error {
	if rec.Recorded == "" {
		rec.Recorded = time.Now().UTC().Format(time.RFC3339)
	}
	m := rec.Machine
	res, err := tx.ExecContext(ctx, `INSERT INTO records (source, part, kind, step, variant, scenario, node_kind, testbed_hash,
		rate, connections, duration_sec, tx_size, latency_emulation, zones,
		machine_key, cpu_model, cpus, kernel, memory_mb, governor, benchnet, build, started, recorded)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.Source, rec.Part, rec.Kind, rec.Step, rec.Variant, rec.Scenario, rec.NodeKind, rec.TestbedHash,
		rec.Load.Rate, rec.Load.Connections, rec.Load.DurationSec, rec.Load.Size, rec.Emulation.Latency, rec.Emulation.Zones,
		m.Key(), m.CPUModel, m.CPUs, m.Kernel, m.MemoryMB, m.Governor, rec.Benchnet, BuildLabel(rec.Builds), rec.Started, rec.Recorded)
	if err != nil {
		return err
	}
	if rec.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	for _, b := range rec.Builds {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO builds (record_id, release_name, program, reference, build_kind, module,
			version, commit_hash, dirty, diff_sha256, content_sha256, binary_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, b.Release, b.Program, b.Reference, b.Kind, b.Module, b.Version, b.Commit, b.Dirty, b.DiffSHA256, b.ContentSHA256, b.BinarySHA256); err != nil {
			return err
		}
	}
	if st := rec.Saturation; st != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO saturation (record_id, connections, lo, hi, outcome, rule) VALUES (?, ?, ?, ?, ?, ?)`,
			rec.ID, st.Connections, st.Lo, st.Hi, st.Outcome, st.Rule); err != nil {
			return err
		}
	}
	for _, p := range rec.Probes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO probes (record_id, seq, probe, rate, connections, repeat, state, tps, p50_ms, run_dir)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, p.Seq, p.Probe, p.Rate, p.Connections, p.Repeat, p.State, p.TPS, p.P50Ms, p.Dir); err != nil {
			return err
		}
	}
	return nil
}

// insertRun writes one repeat with its values, unless the record has it.
func insertRun(ctx context.Context, tx *sql.Tx, id int64, r Run) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (record_id, repeat, run_dir, valid, excluded) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (record_id, repeat) DO NOTHING`, id, r.Repeat, r.Dir, r.Valid, r.Excluded)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	keys := make([]string, 0, len(r.Values))
	for k, v := range r.Values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) { // SQLite stores NaN as NULL
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_values (record_id, repeat, metric, value) VALUES (?, ?, ?, ?)`,
			id, r.Repeat, k, r.Values[k]); err != nil {
			return false, err
		}
	}
	if l := r.Latency; l != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO latency (record_id, repeat, n, avg_ms, min_ms, p50_ms, p95_ms, p99_ms, max_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, r.Repeat, l.N, l.Avg, l.Min, l.P50, l.P95, l.P99, l.Max); err != nil {
			return false, err
		}
	}
	return true, nil
}
