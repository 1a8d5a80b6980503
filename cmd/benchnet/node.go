package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/app/accounts"
	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/kinds/gossipsub"
)

// newNodeCmd is the hidden `benchnet node gossipsub --config FILE`: the
// gossip lab's host, which the testnet starts in every node's namespace (a
// copy of this very executable), not a command for users.
func newNodeCmd() *cobra.Command {
	c := &cobra.Command{Use: "node", Short: "Run a node of benchnet's own kinds (started by the testnet)", Hidden: true}
	var config string
	g := &cobra.Command{
		Use:   "gossipsub --config FILE",
		Short: "A go-libp2p-pubsub host: static peers, control endpoint, trace file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := gossipsub.ReadConfig(config)
			if err != nil {
				return err
			}
			return gossipsub.Run(cmd.Context(), cfg, os.Stderr)
		},
	}
	g.Flags().StringVar(&config, "config", "", "host config (JSON, written by the testnet)")
	_ = g.MarkFlagRequired("config")
	c.AddCommand(g, newAccountsAppCmd(), newMachineExporterCmd(), newLinkemAgentCmd(), newLinkemProbeCmd())
	return c
}

// newAccountsAppCmd is the hidden `benchnet node accounts-app`: the
// accounts ABCI app (internal/app/accounts) the cometbft driver starts next
// to every node whose app is "accounts".
func newAccountsAppCmd() *cobra.Command {
	var cfg accounts.ServeConfig
	c := &cobra.Command{
		Use:   "accounts-app --addr ADDR --dir DIR [--db-backend B] [--app-mempool] [--abci-mempool]",
		Short: "benchnet's accounts ABCI app over a socket",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return accounts.Serve(cmd.Context(), cfg, os.Stderr)
		},
	}
	c.Flags().StringVar(&cfg.Addr, "addr", "", "listen address, tcp://HOST:PORT or unix://PATH")
	c.Flags().StringVar(&cfg.Dir, "dir", "", "the store's directory")
	c.Flags().StringVar(&cfg.Backend, "db-backend", "goleveldb", "store backend: goleveldb or pebbledb")
	c.Flags().BoolVar(&cfg.QueueMempool, "app-mempool", false, "hold future sequences and order them in PrepareProposal")
	c.Flags().BoolVar(&cfg.ABCIMempool, "abci-mempool", false, "keep the mempool in the app (cometbft v0.40's [mempool] type = \"app\": InsertTx, ReapTxs; implies --app-mempool's nonce queue)")
	_ = c.MarkFlagRequired("addr")
	_ = c.MarkFlagRequired("dir")
	return c
}

// newMachineExporterCmd is the hidden `benchnet node machine-exporter`: the
// swarm runner starts one on every machine of the swarm, so that each
// machine's load and CPU are collected as its own series.
func newMachineExporterCmd() *cobra.Command {
	var listen string
	c := &cobra.Command{
		Use:   "machine-exporter --listen ADDR",
		Short: "Serve this machine's load and CPU time under node_exporter's names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return collect.ServeMachine(cmd.Context(), listen)
		},
	}
	c.Flags().StringVar(&listen, "listen", ":9100", "address of /metrics")
	return c
}
