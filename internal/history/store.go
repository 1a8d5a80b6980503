package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite" // the pure-Go driver: no cgo, a static binary
)

// Store is an open history database.
type Store struct {
	db   *sql.DB
	path string
}

// busyTimeoutMS is how long a writer waits for another's transaction: a
// record is one short transaction, so seconds are plenty; a QA writing
// beside another must wait, not fail.
const busyTimeoutMS = 30000

// ErrNewerSchema is wrapped by Open when the database was written by a
// newer benchnet than this one.
var ErrNewerSchema = errors.New("history database schema is newer than this benchnet knows")

// Open opens (creating it and its directory when missing) the database at
// path and migrates an older schema forward; a newer one is refused.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history database %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("history database %s: %w", abs, err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("history database %s: %w", abs, err)
	}
	// One connection: a Store is used by one goroutine at a time, and its
	// connection is opened once, here, where a busy database is retried.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: abs}
	if err := s.firstContact(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// firstContact opens the connection and migrates, retrying while another
// process holds the database busy: SQLite's busy handler does not cover
// everything a new connection does (switching a new database to WAL, or
// reading a WAL another connection is recovering, can fail with
// SQLITE_BUSY at once), so two processes opening a new database together
// would otherwise see one fail.
func (s *Store) firstContact(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	wait := 5 * time.Millisecond
	for {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy reports SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && (e.Code()&0xff == 5 || e.Code()&0xff == 6)
}

// dsn is the driver's name for path: WAL so readers never block the
// writer and a killed writer's transaction is simply not in the log; a
// busy timeout so concurrent writers queue; BEGIN IMMEDIATE so a
// transaction takes the write lock up front (a deferred one that upgrades
// can fail with SQLITE_BUSY at once, which the timeout does not cover);
// foreign keys on, for the cascades.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMS))
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	// A file: URI with the path escaped, so a '?' or '#' in it is a path.
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	return u.String()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// migrate brings the schema to SchemaVersion in one transaction: two
// processes opening a new database at once both see it built once, and
// a migration that fails leaves the old schema as it was.
func (s *Store) migrate(ctx context.Context) error {
	// Read first without a transaction: a current database (the usual
	// case) takes no write lock just to be opened.
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("history database %s: read schema version: %w", s.path, err)
	}
	if v == SchemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("history database %s: read schema version: %w", s.path, err)
	}
	switch {
	case v > SchemaVersion:
		return fmt.Errorf("%w: %s has schema version %d, this benchnet knows up to %d: use a newer benchnet, or another database (--history PATH)",
			ErrNewerSchema, s.path, v, SchemaVersion)
	case v == SchemaVersion:
		return nil
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("history database %s: migrate schema %d to %d: %w", s.path, i, i+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("history database %s: set schema version: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history database %s: migrate to schema %d: %w", s.path, SchemaVersion, err)
	}
	return nil
}
