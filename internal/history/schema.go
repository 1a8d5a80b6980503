package history

// The schema's version is PRAGMA user_version. migrations[i] takes a
// database from version i to i+1, so a new database is built by the same
// steps an old one is migrated by; docs/history.md describes the result.
// Append a step for every change, never edit one that has shipped.
var migrations = []string{
	// 0 -> 1: the first layout.
	`CREATE TABLE records (
		id            INTEGER PRIMARY KEY,
		source        TEXT NOT NULL,
		part          TEXT NOT NULL,
		kind          TEXT NOT NULL,
		step          TEXT NOT NULL DEFAULT '',
		variant       TEXT NOT NULL DEFAULT '',
		scenario      TEXT NOT NULL,
		node_kind     TEXT NOT NULL DEFAULT '',
		testbed_hash  TEXT NOT NULL,
		rate          REAL NOT NULL DEFAULT 0,
		connections   INTEGER NOT NULL DEFAULT 0,
		duration_sec  REAL NOT NULL DEFAULT 0,
		tx_size       INTEGER NOT NULL DEFAULT 0,
		latency_emulation INTEGER NOT NULL DEFAULT 0,
		zones         TEXT NOT NULL DEFAULT '',
		machine_key   TEXT NOT NULL,
		cpu_model     TEXT NOT NULL DEFAULT '',
		cpus          INTEGER NOT NULL DEFAULT 0,
		kernel        TEXT NOT NULL DEFAULT '',
		memory_mb     INTEGER NOT NULL DEFAULT 0,
		benchnet      TEXT NOT NULL DEFAULT '',
		build         TEXT NOT NULL DEFAULT '',
		started       TEXT NOT NULL DEFAULT '',
		recorded      TEXT NOT NULL,
		UNIQUE (source, part)
	);
	CREATE INDEX records_series ON records (scenario, testbed_hash, machine_key);
	CREATE TABLE builds (
		record_id      INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
		release_name   TEXT NOT NULL,
		program        TEXT NOT NULL,
		reference      TEXT NOT NULL DEFAULT '',
		build_kind     TEXT NOT NULL DEFAULT '',
		module         TEXT NOT NULL DEFAULT '',
		version        TEXT NOT NULL DEFAULT '',
		commit_hash    TEXT NOT NULL DEFAULT '',
		dirty          INTEGER NOT NULL DEFAULT 0,
		diff_sha256    TEXT NOT NULL DEFAULT '',
		content_sha256 TEXT NOT NULL DEFAULT '',
		binary_sha256  TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (record_id, release_name, program)
	);
	CREATE TABLE runs (
		record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
		repeat    INTEGER NOT NULL,
		run_dir   TEXT NOT NULL,
		valid     INTEGER NOT NULL DEFAULT 1,
		excluded  TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (record_id, repeat)
	);
	CREATE TABLE run_values (
		record_id INTEGER NOT NULL,
		repeat    INTEGER NOT NULL,
		metric    TEXT NOT NULL,
		value     REAL NOT NULL,
		PRIMARY KEY (record_id, repeat, metric),
		FOREIGN KEY (record_id, repeat) REFERENCES runs(record_id, repeat) ON DELETE CASCADE
	);
	CREATE TABLE saturation (
		record_id   INTEGER PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
		connections INTEGER NOT NULL,
		lo          REAL NOT NULL,
		hi          REAL NOT NULL,
		outcome     TEXT NOT NULL DEFAULT '',
		rule        TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE probes (
		record_id   INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
		seq         INTEGER NOT NULL,
		probe       INTEGER NOT NULL DEFAULT 0,
		rate        REAL NOT NULL,
		connections INTEGER NOT NULL,
		repeat      INTEGER NOT NULL DEFAULT 1,
		state       TEXT NOT NULL DEFAULT '',
		tps         REAL NOT NULL DEFAULT 0,
		p50_ms      REAL NOT NULL DEFAULT 0,
		run_dir     TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (record_id, seq)
	);`,
	// 1 -> 2: the CPU governor joins the fingerprint; each repeat's latency
	// quantiles get their own table.
	`ALTER TABLE records ADD COLUMN governor TEXT NOT NULL DEFAULT '';
	CREATE TABLE latency (
		record_id INTEGER NOT NULL,
		repeat    INTEGER NOT NULL,
		n         INTEGER NOT NULL,
		avg_ms    REAL NOT NULL,
		min_ms    REAL NOT NULL,
		p50_ms    REAL NOT NULL,
		p95_ms    REAL NOT NULL,
		p99_ms    REAL NOT NULL,
		max_ms    REAL NOT NULL,
		PRIMARY KEY (record_id, repeat),
		FOREIGN KEY (record_id, repeat) REFERENCES runs(record_id, repeat) ON DELETE CASCADE
	);`,
}

// SchemaVersion is the version this benchnet writes.
var SchemaVersion = len(migrations)
