package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
)

// runCommands are the host commands a run of the default runner execs on
// this machine (local's: iptables only where bridged frames pass the
// firewall). ping is not among them: only the tests use it.
func runCommands() []string { return infra.Commands(manifest.DefaultRunner) }

// testCommands are what the test suite execs besides: ping (emulated RTTs),
// chromium (the report test renders HTML), prometheus (the --prometheus test),
// nsenter and fuse-overlayfs (the multi-engine swarm, swarm/swarmtest).
var testCommands = []string{"ping", "chromium", "prometheus", "nsenter", "fuse-overlayfs"}

// testReleases are the binaries the test suite runs: the quickstart's release,
// the v0.38 baseline, the socket app, CometBFT's own load tools for the
// cross-checks, Tendermint Core v0.34.22 (its own metrics namespace) and
// v0.40.0 (the go-libp2p transport).
// Pinned, like everything else.
var testReleases = []struct {
	rel  release.Release
	tool string
}{
	{release.Release{Name: "cometbft", Version: "v1.0.1"}, "cometbft"},
	{release.Release{Name: "cometbft", Version: "v0.38.17"}, "cometbft"},
	{release.Release{Name: "cometbft", Version: "v1.0.1"}, "abci-cli"},
	{release.Release{Name: "cometbft", Version: "v1.0.1"}, "loadtime-load"},
	{release.Release{Name: "cometbft", Version: "v1.0.1"}, "loadtime-report"},
	{release.Release{Name: "tendermint", Version: "v0.34.22"}, "cometbft"},
	{release.Release{Name: "cometbft", Version: "v0.40.0"}, "cometbft"}, // the go-libp2p transport
}

func newSetupCmd() *cobra.Command {
	var forTests bool
	c := &cobra.Command{
		Use:   "setup",
		Short: "Install the Debian packages and build the release binaries benchnet needs",
		Long: `setup makes a fresh machine (Go and root, nothing else) ready: it installs the
Debian packages benchnet execs (iproute2, util-linux, and iptables where
bridge netfilter is on) and builds the quickstart's CometBFT release into the
cache. With --tests it also installs iputils-ping (the link-emulation tests),
chromium (the report test renders HTML) and prometheus (the --prometheus test)
and builds every release the test suite runs. Everything already present is reused, so it is cheap to repeat.`,
		Example: `  benchnet setup
  benchnet setup --tests && BENCHNET_INTEGRATION=1 go test ./...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmds := runCommands()
			if forTests {
				cmds = append(cmds, testCommands...)
			}
			if err := deps.Ensure(cmd.Context(), os.Stderr, cmds...); err != nil {
				return err
			}
			for _, r := range testReleases {
				if !forTests && (r.rel.Version != "v1.0.1" || r.tool != "cometbft") {
					continue
				}
				path, err := binaries.Ensure(cmd.Context(), r.rel, r.tool, os.Stderr)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&forTests, "tests", false, "also install and build what the test suite needs")
	return c
}
