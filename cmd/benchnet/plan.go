package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/capacity"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

func newPlanCmd() *cobra.Command {
	var asJSON bool
	var runner, machine string
	c := &cobra.Command{
		Use:   "plan [manifest.toml]",
		Short: "Print the resolved testnet: every node's role, zone, address, ports, peers, binary",
		Example: `  benchnet plan examples/quickstart.toml
  benchnet plan --json examples/seeds.toml | jq '.nodes[].addr'
  benchnet plan examples/qa-200.toml --runner swarm --machine 8c/32g`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(cmd.Context(), args)
			if err != nil {
				return err
			}
			if runner != "" {
				m.Infra.Runner = runner
				if errs := m.Validate(); len(errs) > 0 {
					return usageError{errs}
				}
			}
			var notes []string
			cluster := infra.Caps(m.Infra.Runner).Placement != ""
			if cluster {
				// Sized as `up` will run it: with the large defaults.
				if notes = capacity.LargeDefaults(m); len(notes) > 0 {
					if errs := m.Validate(); len(errs) > 0 {
						return usageError{errs}
					}
				}
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
			if err := printPlan(cmd, t); err != nil {
				return err
			}
			if cluster || cmd.Flags().Changed("machine") {
				return printClusterSizing(cmd, t, m.Infra.Runner, machine, notes)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON, for scripts")
	c.Flags().StringVar(&runner, "runner", "", "size the plan for this runner (overrides [infra] runner)")
	c.Flags().StringVar(&machine, "machine", "8c/32g", "size of one swarm machine (<cores>c/<memory>g) for the machines the plan needs")
	return c
}

func printPlan(cmd *cobra.Command, t *plan.Testnet) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "testnet %s (seed %d): %d nodes in %s, harness at %s, topology %s\n\n",
		t.Name, t.Seed, len(t.Nodes), t.Subnet, t.Gateway, t.Topology)
	if ts := t.Network.TimeScale; ts > 1 {
		fmt.Fprintf(out, "slow motion: every consensus timeout ×%g ([network] time_scale)\n\n", ts)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tROLE\tZONE\tADDRESS\tP2P/RPC/METRICS\tRELEASE\tAPP\tDELAY\tPEERS")
	// In the random topology a node lists only the peers it dials; its
	// links also count the nodes that dial it.
	links := map[string]int{}
	for _, n := range t.Nodes {
		for _, p := range n.PersistentPeers {
			links[n.Name]++
			links[p]++
		}
	}
	for _, n := range t.Nodes {
		peers := "persistent: " + strings.Join(n.PersistentPeers, ",")
		switch {
		case t.Topology == "random" && n.Role != "seed":
			peers = fmt.Sprintf("%d links, dials: %s", links[n.Name], strings.Join(n.PersistentPeers, ","))
		case len(n.Seeds) > 0 || len(n.PersistentPeers) == 0:
			peers = "seeds: " + strings.Join(n.Seeds, ",")
		}
		if n.Transport != "" {
			peers = n.Transport + " " + strings.Replace(peers, "persistent:", "bootstrap:", 1)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d/%d/%d\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Zone, n.Addr,
			n.P2PPort, n.RPCPort, n.PrometheusPort, n.Release, n.App, n.StartDelay, peers)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// The binaries every node runs, and whether `up` will have to build them.
	fmt.Fprintln(out)
	d, err := node.New(t.NodeKind(), node.Config{})
	if err != nil {
		return err
	}
	if desc, ok := d.(node.Describer); ok {
		for _, line := range desc.Describe(t) {
			fmt.Fprintln(out, line)
		}
	}
	return nil
}

// printClusterSizing prints how many machines of a size the testnet needs
// under a cluster runner (the capacity model at its nominal block rate, by
// zone when zones place nodes) and, where the cluster answers (a swarm
// manager), what its machines offer.
func printClusterSizing(cmd *cobra.Command, t *plan.Testnet, runner, machine string, notes []string) error {
	out := cmd.OutOrStdout()
	size, err := capacity.ParseSize(machine)
	if err != nil {
		return usageError{fmt.Errorf("--machine: %w", err)}
	}
	fmt.Fprintln(out)
	for _, n := range notes {
		fmt.Fprintf(out, "large testnet default: %s\n", n)
	}
	zones := map[string]int{}
	for _, n := range t.Nodes {
		if n.Zone != "" {
			zones[n.Zone]++
		}
	}
	if len(zones) < 2 {
		zones = nil
	}
	e := capacity.Need(t, runner)
	ms, err := capacity.NeedMachines(e, size, zones)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d nodes, %d links need %s\n", runner, e.Nodes, e.Links, ms)
	if label := infra.Caps(runner).Placement; zones != nil && label != "" {
		fmt.Fprintf(out, "  label them: docker node update --label-add %s=<zone> <node>\n", label)
	}
	have, err := infra.Machines(cmd.Context(), runner)
	if err != nil {
		return nil // no cluster to ask (not a swarm manager): the sizing is all there is
	}
	var cl []capacity.Machine
	labelled := map[string]bool{}
	for _, h := range have {
		cl = append(cl, capacity.Machine{Cores: h.NCPU, MemAvail: h.MemBytes})
		fmt.Fprintf(out, "  this cluster: %s (%s) %d cores, %d MiB, zone %q\n", h.Hostname, h.ID, h.NCPU, h.MemBytes>>20, h.Zone)
		if h.Zone != "" {
			labelled[h.Zone] = true
		}
	}
	if anywhere := unpinned(t, labelled); len(labelled) > 0 && anywhere > 0 {
		fmt.Fprintf(out, "  %d of %d nodes have no zone a machine is labelled with: placed on any machine\n", anywhere, len(t.Nodes))
	}
	c := capacity.Cluster(cl)
	f := e.Fit(c)
	fmt.Fprintf(out, "  in all %d cores, %d MiB: %s\n", c.Cores, c.MemAvail>>20, f)
	if err := capacity.Check(e, c); err != nil {
		fmt.Fprintf(out, "  too small: %v\n", err)
	}
	return nil
}

// unpinned counts t's nodes that a cluster labelled with the zones in
// labelled places anywhere (infra.Placed); a zone it refuses counts as
// pinned, since the runner's refusal says so.
func unpinned(t *plan.Testnet, labelled map[string]bool) int {
	n := 0
	for _, node := range t.Nodes {
		if pinned, ok := infra.Placed(node.Zone, labelled); ok && !pinned {
			n++
		}
	}
	return n
}
