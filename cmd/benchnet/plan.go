package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/plan"
)

func newPlanCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "plan [manifest.toml]",
		Short: "Print the resolved testnet: every node's role, zone, address, ports, peers, binary",
		Example: `  benchnet plan examples/quickstart.toml
  benchnet plan --json examples/seeds.toml | jq '.nodes[].addr'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(args)
			if err != nil {
				return err
			}
			t, err := plan.Resolve(m)
			if err != nil {
				return err
			}
			if asJSON {
				data, err := t.JSON()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", data)
				return err
			}
			return printPlan(cmd, t)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON, for scripts")
	return c
}

func printPlan(cmd *cobra.Command, t *plan.Testnet) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "testnet %s (seed %d): %d nodes in %s, harness at %s, topology %s\n\n",
		t.Name, t.Seed, len(t.Nodes), t.Subnet, t.Gateway, t.Topology)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tROLE\tZONE\tADDRESS\tP2P/RPC/METRICS\tRELEASE\tAPP\tDELAY\tPEERS")
	for _, n := range t.Nodes {
		peers := "persistent: " + strings.Join(n.PersistentPeers, ",")
		if len(n.Seeds) > 0 || len(n.PersistentPeers) == 0 {
			peers = "seeds: " + strings.Join(n.Seeds, ",")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d/%d/%d\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Zone, n.Addr,
			n.P2PPort, n.RPCPort, n.PrometheusPort, n.Release, n.App, n.StartDelay, peers)
	}
	return w.Flush()
}
