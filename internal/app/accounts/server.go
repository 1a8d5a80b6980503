package accounts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	dbm "github.com/cometbft/cometbft-db"
)

// Backends are the store backends the app can use (cometbft-db's pure-Go ones).
var Backends = []string{"goleveldb", "pebbledb"}

// ServeConfig is what `benchnet node accounts-app` gets on its command line.
type ServeConfig struct {
	Addr    string // tcp://HOST:PORT or unix://PATH
	Dir     string // the store's directory
	Backend string // goleveldb | pebbledb
	Options
}

// OpenDB opens the app's store under dir with backend.
func OpenDB(dir, backend string) (dbm.DB, error) {
	known := false
	for _, b := range Backends {
		known = known || b == backend
	}
	if !known {
		return nil, fmt.Errorf("accounts: db backend %q: want goleveldb or pebbledb", backend)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("accounts: store dir: %w", err)
	}
	db, err := dbm.NewDB("accounts", dbm.BackendType(backend), dir)
	if err != nil {
		return nil, fmt.Errorf("accounts: open %s store in %s: %w", backend, filepath.Join(dir, "accounts.db"), err)
	}
	return db, nil
}

// Serve runs the app's ABCI socket server until ctx ends, then stops it
// and closes the store.
func Serve(ctx context.Context, cfg ServeConfig, log io.Writer) error {
	db, err := OpenDB(cfg.Dir, cfg.Backend)
	if err != nil {
		return err
	}
	app, err := New(db, cfg.Options)
	if err != nil {
		_ = db.Close()
		return err
	}
	defer app.Close()
	srv, err := newSocketServer(app, cfg.Addr, log)
	if err != nil {
		return fmt.Errorf("accounts: serve on %s: %w", cfg.Addr, err)
	}
	fmt.Fprintf(log, "accounts app: serving on %s (store %s, app_mempool %v, abci_mempool %v)\n", cfg.Addr, cfg.Backend, cfg.QueueMempool, cfg.ABCIMempool)
	<-ctx.Done()
	if err := srv.stop(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("accounts: stop server: %w", err)
	}
	return nil
}
