-- A history database as schema version 1 wrote it: its tables and one
-- compare variant of two repeats, plus a search's saturation record.
-- TestHistoryMigratesV1 loads it and opens it with this benchnet.
CREATE TABLE records (
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
);

INSERT INTO records (id, source, part, kind, step, variant, scenario, node_kind, testbed_hash,
  rate, connections, duration_sec, tx_size, latency_emulation, zones,
  machine_key, cpu_model, cpus, kernel, memory_mb, benchnet, build, started, recorded)
VALUES (1, '/runs/20261101-090000-quickstart-compare', 'variant base', 'compare', '', 'base', 'quickstart', 'cometbft', '0123456789abcdef',
  200, 1, 60, 1024, 0, '',
  'b52e7db65403', 'Test CPU @ 2.0GHz', 2, '6.1.0-test', 4096, 'v0.9.0', 'cometbft@v0.38.17', '2026-11-01T09:00:00Z', '2026-11-01T10:00:00Z');
INSERT INTO builds VALUES (1, 'cometbft@v0.38.17', 'cometbft', 'cometbft@v0.38.17', 'tag', 'github.com/cometbft/cometbft', 'v0.38.17', '', 0, '', '', 'aa11');
INSERT INTO runs VALUES (1, 1, '/runs/20261101-090000-quickstart-compare/runs/a', 1, '');
INSERT INTO runs VALUES (1, 2, '/runs/20261101-090000-quickstart-compare/runs/b', 1, 'testbed-bound: steal 6 %');
INSERT INTO run_values VALUES (1, 1, 'tps', 198.5), (1, 1, 'latency_p50', 810), (1, 2, 'tps', 171.25), (1, 2, 'latency_p50', 905);
INSERT INTO records (id, source, part, kind, scenario, testbed_hash, connections, duration_sec, machine_key, build, started, recorded)
VALUES (2, '/runs/20261101-100000-quickstart-sweep', 'saturation c=1 d=30s', 'search', 'quickstart', '0123456789abcdef', 1, 30,
  'b52e7db65403', 'cometbft@v0.38.17', '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
INSERT INTO saturation VALUES (2, 1, 400, 800, 'found', 'committed >= 90 %');
INSERT INTO probes VALUES (2, 1, 1, 400, 1, 1, 'ok', 399, 700, '/runs/20261101-100000-quickstart-sweep/cells/a'),
  (2, 2, 2, 800, 1, 1, 'saturated', 610, 2400, '/runs/20261101-100000-quickstart-sweep/cells/b');
PRAGMA user_version = 1;
