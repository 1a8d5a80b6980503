package main

import (
	// Every node kind's driver, for testnet.Up.
	_ "github.com/benchnet/benchnet/internal/kinds"

	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/binaries"
	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/release"
	"github.com/benchnet/benchnet/internal/testnet"
)

// upFlags are shared by every command that brings a testnet up.
type upFlags struct {
	output  string
	timeout time.Duration
	runner  string
	force   bool
}

func (f *upFlags) register(c *cobra.Command) {
	c.Flags().StringVarP(&f.output, "output", "o", "runs", "root directory of run directories")
	c.Flags().DurationVar(&f.timeout, "ready-timeout", 60*time.Second, "how long every node may take to reach height 2")
	c.Flags().StringVar(&f.runner, "runner", "", "what hosts the nodes: local (network namespaces), docker (containers) or swarm (Docker Swarm services); overrides [infra].runner")
	c.Flags().BoolVar(&f.force, "force", false, "start even when the capacity estimate says the testnet does not fit on this machine")
}

// applyRunner copies --runner into the manifest and validates it with the
// rest (a runner refuses what it cannot host, e.g. link emulation). Every
// command that brings testnets up applies it (qa to both its testbeds), and
// the manifest's Raw records it for the directory and a resume.
func (f *upFlags) applyRunner(m *manifest.Manifest) error {
	if f.runner == "" {
		return nil
	}
	if err := m.WithRunner(f.runner); err != nil {
		return err
	}
	if errs := m.Validate(); len(errs) > 0 {
		for _, e := range errs {
			if e.Field == "infra.runner" {
				e.File, e.Line, e.Field = "", 0, "--runner"
			}
		}
		return usageError{errs}
	}
	return nil
}

func (f *upFlags) options() testnet.Options {
	// Harness: main's SIGTERM handler tears the run down, so `benchnet down`
	// elsewhere may ask this process to end it.
	return testnet.Options{Output: f.output, ReadyTimeout: f.timeout, Log: os.Stderr, Harness: true}
}

func (f *upFlags) up(ctx context.Context, m *manifest.Manifest) (*testnet.Testnet, error) {
	if err := needRoot(); err != nil {
		return nil, err
	}
	if err := deps.Ensure(ctx, os.Stderr, runCommands()...); err != nil {
		return nil, err
	}
	return testnet.Up(ctx, m, f.options())
}

// holdLinks keeps `up` in the foreground while the userspace link emulator,
// which lives in this process, carries the testnet's frames. Ending the
// testnet is what this foreground is for, so a clean teardown is a success
// (exit 0) however it was asked: Ctrl-C, SIGTERM from `benchnet down` in
// another terminal, or the run's namespaces or state vanishing (a down or
// sweep that did not ask first), checked every second.
func holdLinks(ctx context.Context, cmd *cobra.Command, t *testnet.Testnet) error {
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "the userspace link emulator runs in this process: staying in the foreground (Ctrl-C or 'benchnet down' ends the testnet)")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	down := func(why string) error {
		fmt.Fprintf(out, "%s: taking %s down\n", why, t.Plan.Name)
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := t.Down(dctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s is down (run directory kept: %s)\n", t.Plan.Name, t.Dir.Path)
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return down(context.Cause(ctx).Error())
		case ex := <-t.Runner.Exited():
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s %s (pid %d) exited: %s\n", ex.Node, ex.Name, ex.PID, ex.Status)
		case <-tick.C:
			if err := t.Check(); err != nil {
				return down("taken down elsewhere (" + err.Error() + ")")
			}
		}
	}
}

func needRoot() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("bringing a testnet up needs root (network namespaces, veth, bridges): run as root")
	}
	return nil
}

func newUpCmd() *cobra.Command {
	var f upFlags
	c := &cobra.Command{
		Use:   "up [manifest.toml]",
		Short: "Build missing releases, create hosts, start nodes, wait until all produce blocks",
		Long: `up brings a testnet up and leaves it running: every node in its own network
namespace, logs and homes in the run directory. With no manifest it uses the
built-in quickstart (4 validators of CometBFT v1.0.1, in-process kvstore).
Stop it with 'benchnet down'. With the userspace link emulator (kernels without
sch_netem) the links live in this process, so up stays in the foreground until
Ctrl-C or 'benchnet down' from another terminal ends the testnet (exit 0).`,
		Example: `  benchnet up                            # the built-in quickstart
  benchnet up examples/v038.toml --output /tmp/runs
  benchnet status && benchnet down`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(cmd.Context(), args)
			if err != nil {
				return err
			}
			if err := f.applyRunner(m); err != nil {
				return err
			}
			if err := f.fit(cmd, m, os.Stderr); err != nil {
				return err
			}
			t, err := f.up(cmd.Context(), m)
			if err != nil {
				return err
			}
			measureIdle(t, os.Stderr)
			fmt.Fprintf(cmd.OutOrStdout(), "%s is up (run %s, %s)\nstatus: benchnet status    stop: benchnet down\n", t.Plan.Name, t.RunID, t.Dir.Path)
			if t.LinksInProcess() {
				return holdLinks(cmd.Context(), cmd, t)
			}
			return nil
		},
	}
	f.register(c)
	return c
}

func newBuildCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "build REF...",
		Short: "Build release binaries into the cache (a tag, a commit, a source tree or a binary), with provenance",
		Long: `build makes the binaries of each release reference ready in the cache
(` + "`$XDG_CACHE_HOME/benchnet/bin/NAME@VERSION/`" + `) and prints their paths. A reference is
a module tag (cometbft@v1.0.1), a commit or branch resolved by the module proxy
(cometbft@4ced46d3), a local source tree (./cometbft, /src/fork, path:../x:
built with this machine's Go, CGO_ENABLED=0, -trimpath, rebuilt only when the
files Go compiles change) or a prebuilt binary (file:/path/to/cometbft). See
docs/releases.md. 'up' and 'run' do this implicitly; an existing build is
reused. Provenance is recorded beside each binary.`,
		Example: `  benchnet build cometbft@v1.0.1
  benchnet build cometbft@v0.38.17 --abci-cli
  benchnet build tendermint@v0.34.22
  benchnet build ./cometbft
  benchnet build file:/usr/local/bin/cometbft`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			withApp, _ := cmd.Flags().GetBool("abci-cli")
			// Every reference is checked before anything is built.
			var rels []release.Release
			for _, a := range args {
				if ref, err := release.Parse(a); err == nil && ref.Kind == release.Tag {
					if err := manifest.ReleaseSupported(ref.Name, ref.Version); err != nil {
						return usageError{fmt.Errorf("build REF: %q: %w", a, err)}
					}
				}
				res, err := release.Resolve(cmd.Context(), a, "")
				if err != nil {
					if cmd.Context().Err() != nil {
						return err
					}
					return usageError{fmt.Errorf("build REF: %w", err)}
				}
				if withApp && res.Release.File() != "" {
					return usageError{fmt.Errorf("build REF: %q is a prebuilt node binary: it has no abci-cli (--abci-cli)", a)}
				}
				rels = append(rels, res.Release)
			}
			for _, rel := range rels {
				tools := []string{"cometbft"}
				if withApp {
					tools = append(tools, "abci-cli")
				}
				for _, tool := range tools {
					start := time.Now()
					hit := binaries.Cached(rel, tool)
					path, err := binaries.Ensure(cmd.Context(), rel, tool, os.Stderr)
					if err != nil {
						return err
					}
					how := "built"
					if rel.File() != "" {
						how = "copied"
					}
					if hit {
						how = "cache hit"
					}
					fmt.Fprintf(os.Stderr, "%s %s: %s in %s\n", rel, tool, how, time.Since(start).Round(time.Millisecond))
					fmt.Fprintln(cmd.OutOrStdout(), path)
				}
			}
			return nil
		},
	}
	c.Flags().Bool("abci-cli", false, "also build abci-cli (the kvstore-socket app)")
	return c
}
