package history

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleRecord is a record with every table's rows.
func sampleRecord(source string) *Record {
	return &Record{
		Source: source, Part: "variant cand", Kind: "compare", Variant: "cand", Scenario: "quickstart", NodeKind: "cometbft",
		TestbedHash: "00112233445566ff", Load: Load{Rate: 200, Connections: 2, DurationSec: 90, Size: 1024},
		Emulation: Emulation{Latency: true, Zones: "aws"},
		Machine:   Machine{CPUModel: "Test CPU", CPUs: 2, Kernel: "6.1.0", MemoryMB: 24000, Governor: "performance"},
		Benchnet:  "v0.9.1",
		Builds: []Build{{Release: "cometbft@v1.0.1+tree.abc", Program: "cometbft", Reference: "./cometbft", Kind: "tree",
			Module: "github.com/cometbft/cometbft", Version: "v1.0.1", Commit: "4ced46d3aa", Dirty: true, DiffSHA256: "d1ff",
			ContentSHA256: "c0ff", BinarySHA256: "b1b1"}},
		Started: "2026-11-20T10:00:00Z", Recorded: "2026-11-20T11:00:00Z",
		Runs: []Run{
			{Repeat: 1, Dir: source + "/runs/1", Valid: true, Values: map[string]float64{"tps": 401.5, "latency_p50": 812},
				Latency: &Latency{N: 36000, Avg: 850, Min: 300, P50: 812, P95: 1400, P99: 1900, Max: 2500}},
			{Repeat: 2, Dir: source + "/runs/2", Valid: false, Excluded: "testbed-bound: steal 7 %", Values: map[string]float64{"tps": 350}},
		},
		Saturation: &Saturation{Connections: 2, Lo: 400, Hi: 800, Outcome: "found", Rule: "rule"},
		Probes:     []Probe{{Seq: 1, Probe: 1, Rate: 400, Connections: 2, Repeat: 1, State: "ok", TPS: 799, P50Ms: 700, Dir: source + "/cells/1"}},
	}
}

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "history.db") // the directory is made
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// TestHistoryRoundTrip: a record reads back as written, adding it again
// writes nothing, and a repeat it lacked is added alone.
func TestHistoryRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	rec := sampleRecord("/runs/x-compare")
	if o, n, err := s.Add(ctx, rec); err != nil || o != Added || n != 2 {
		t.Fatalf("first add: %v %d %v", o, n, err)
	}
	got, err := s.Records(ctx, Query{Scenario: "quickstart"})
	if err != nil || len(got) != 1 {
		t.Fatalf("records: %d %v", len(got), err)
	}
	if !reflect.DeepEqual(got[0], rec) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got[0], rec)
	}

	again := sampleRecord("/runs/x-compare")
	if o, n, err := s.Add(ctx, again); err != nil || o != Skipped || n != 0 || again.ID != rec.ID {
		t.Fatalf("second add: %v %d %v (id %d, want %d)", o, n, err, again.ID, rec.ID)
	}
	again.Runs = append(again.Runs, Run{Repeat: 3, Dir: "/runs/x-compare/runs/3", Valid: true, Values: map[string]float64{"tps": 399}})
	if o, n, err := s.Add(ctx, again); err != nil || o != Extended || n != 1 {
		t.Fatalf("add with a new repeat: %v %d %v", o, n, err)
	}
	got, _ = s.Records(ctx, Query{})
	if len(got) != 1 || len(got[0].Runs) != 3 || got[0].Runs[2].Values["tps"] != 399 {
		t.Fatalf("after extending: %+v", got)
	}

	other := sampleRecord("/runs/y-compare")
	other.Builds[0].Reference, other.Machine.Governor = "cometbft@v1.0.1", ""
	if _, _, err := s.Add(ctx, other); err != nil {
		t.Fatal(err)
	}
	series, err := s.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Two machines (the governor differs): two series, never one.
	if len(series) != 2 || series[0].Records != 1 || series[1].Records != 1 || series[0].MachineKey == series[1].MachineKey {
		t.Errorf("series: %+v", series)
	}
	if got, _ := s.Records(ctx, Query{MachineKey: rec.Machine.Key()}); len(got) != 1 || got[0].Source != "/runs/x-compare" {
		t.Errorf("query by machine: %+v", got)
	}
}

// TestHistoryMigratesV1: a database schema 1 wrote is migrated in place:
// its rows read back, the columns schema 2 added have their defaults, the
// machine key is the one schema 1 stored, and new records go in.
func TestHistoryMigratesV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	fixture, err := os.ReadFile("testdata/v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(string(fixture)); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version %d (%v), want %d", v, err, SchemaVersion)
	}
	recs, err := s.Records(ctx, Query{})
	if err != nil || len(recs) != 2 {
		t.Fatalf("records after migration: %d %v", len(recs), err)
	}
	r := recs[0]
	if r.Machine.Governor != "" || r.Runs[0].Latency != nil || len(r.Runs) != 2 || r.Runs[1].Values["tps"] != 171.25 ||
		r.Runs[1].Excluded == "" || r.Builds[0].Version != "v0.38.17" {
		t.Errorf("migrated record: %+v", r)
	}
	var key string
	if err := s.db.QueryRow("SELECT machine_key FROM records WHERE id = 1").Scan(&key); err != nil || key != r.Machine.Key() {
		t.Errorf("machine key %q, Key() of its fields %q: a v1 machine would start a new series", key, r.Machine.Key())
	}
	if sat := recs[1].Saturation; sat == nil || sat.Lo != 400 || sat.Hi != 800 || len(recs[1].Probes) != 2 {
		t.Errorf("saturation record: %+v", recs[1])
	}
	rec := sampleRecord("/runs/new")
	if o, _, err := s.Add(ctx, rec); err != nil || o != Added {
		t.Fatalf("add after migration: %v %v", o, err)
	}
	got, _ := s.Records(ctx, Query{Source: "/runs/new"})
	if len(got) != 1 || got[0].Runs[0].Latency == nil || got[0].Machine.Governor != "performance" {
		t.Errorf("new record after migration: %+v", got)
	}
}

// TestHistoryRefusesNewerSchema: a database a newer benchnet wrote is
// refused, naming the file and both versions, and left untouched.
func TestHistoryRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.db.Exec("PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, path)
	if err == nil {
		t.Fatal("a schema 7 database was opened")
	}
	for _, want := range []string{path, "schema version 7", "knows up to 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("error %v is not ErrNewerSchema", err)
	}
	raw, _ := sql.Open("sqlite", path)
	defer raw.Close()
	var v int
	if err := raw.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 7 {
		t.Errorf("user_version is %d after the refusal (%v), want 7", v, err)
	}
}

// TestHistoryDefaultPath: $BENCHNET_HISTORY first, else beside the
// release cache.
func TestHistoryDefaultPath(t *testing.T) {
	t.Setenv(EnvPath, "")
	t.Setenv("BENCHNET_CACHE", "/c/benchnet")
	if got := DefaultPath(); got != "/c/benchnet/history.db" {
		t.Errorf("DefaultPath() = %q", got)
	}
	t.Setenv(EnvPath, "/tmp/h.db")
	if got := DefaultPath(); got != "/tmp/h.db" {
		t.Errorf("DefaultPath() with %s = %q", EnvPath, got)
	}
}
