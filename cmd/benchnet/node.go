package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/node/gossipsub"
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
	c.AddCommand(g)
	return c
}
