package cometbft

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// AccountsApp is the app name of benchnet's accounts ABCI app
// (internal/app/accounts), served by `benchnet node accounts-app` on
// AppAddr next to the node, like abci-cli's kvstore.
const AccountsApp = "accounts"

// AppProgram is the program of the accounts app in Binaries: this benchnet.
const AppProgram = "benchnet"

// HasAppProcess reports whether node n runs its app as a second process.
func HasAppProcess(n *plan.Node) bool {
	return n.App == "kvstore-socket" || n.App == AccountsApp
}

// AppDBBackend is the store of n's accounts app: the node's own db_backend
// when the manifest sets one, else the release's default (goleveldb up to
// v0.38, pebbledb from v1.0), so app and node use the same engine.
func AppDBBackend(n *plan.Node) string {
	if v, ok := n.Config["db_backend"].(string); ok && v != "" {
		return v
	}
	if strings.HasPrefix(n.Release.Version, "v0.") {
		return "goleveldb"
	}
	return "pebbledb"
}

// AccountsAppArgv runs the accounts app of node n on AppAddr with its store
// under the node's home.
func AccountsAppArgv(bin, home string, n *plan.Node) []string {
	argv := []string{bin, "node", "accounts-app", "--addr", AppAddr, "--dir", AppDataDir(home), "--db-backend", AppDBBackend(n)}
	if n.AppMempool {
		argv = append(argv, "--app-mempool")
	}
	if n.Mempool == manifest.MempoolApp {
		argv = append(argv, "--abci-mempool")
	}
	return argv
}

// appBinPath is where Homes copies the app's executable: inside the run
// directory, so an unprivileged node host can run it whatever the
// harness's own path.
func appBinPath(runDir string) string { return filepath.Join(runDir, "bin", "benchnet-app") }

func copyExecutable(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy app executable: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("copy app executable: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copy app executable: %w", err)
	}
	return out.Close()
}
