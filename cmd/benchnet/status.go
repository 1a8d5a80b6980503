package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

func newStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [RUN_DIR...]",
		Short: "Per node: what its kind tells (CometBFT: height, peers, mempool size, catching_up; gossipsub: peers, topic, published), pid, RSS",
		Example: `  benchnet status
  benchnet status runs/20261123-101500-quickstart`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs := args
			if len(dirs) == 0 {
				states, err := proctable.ActiveRuns()
				if err != nil {
					return err
				}
				for _, s := range states {
					dirs = append(dirs, filepath.Dir(s))
				}
			}
			if len(dirs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no live run")
				return nil
			}
			for _, d := range dirs {
				if err := printStatus(cmd.Context(), cmd, d); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// nodeStatus is one node's row: the values of its kind's status columns
// ("-" for one it could not get) and what failed.
type nodeStatus struct {
	values []string
	err    string
}

func printStatus(ctx context.Context, cmd *cobra.Command, path string) error {
	dir, err := rundir.Open(path)
	if err != nil {
		return err
	}
	t, err := plan.Read(dir.Path)
	if err != nil {
		return fmt.Errorf("status of %s: %w", path, err)
	}
	pids := proctable.NodePIDs(dir.Join(rundir.State))
	_ = testnet.ReachFromState(t, dir.Join(rundir.State)) // where the runner published the nodes
	// A container runner's nodes: memory and CPU as their cgroups count it.
	usage, _ := infra.NodeUsage(ctx, dir.Join(rundir.State))
	// The kind says what of a running node it can tell (node.Statuser):
	// CometBFT's height, peers, mempool and catching_up from its RPC.
	d, err := node.New(t.NodeKind(), node.Config{})
	if err != nil {
		return fmt.Errorf("status of %s: %w", path, err)
	}
	sd, _ := d.(node.Statuser)
	var cols []string
	if sd != nil {
		cols = sd.StatusColumns()
	}
	sts := make([]nodeStatus, len(t.Nodes))
	var wg sync.WaitGroup
	for i, n := range t.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sts[i] = queryNode(ctx, sd, n, len(cols))
		}()
	}
	wg.Wait()
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s  %s\n", t.Name, dir.Path)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(slices.Concat([]string{"NODE", "ADDRESS"}, cols, []string{"PID", "RSS", "ERROR"}), "\t"))
	for i, n := range t.Nodes {
		s := sts[i]
		pid, rss := "-", "-"
		if p, ok := pids[n.Name]; ok && p > 0 {
			pid = strconv.Itoa(p)
			rss = readRSS(p)
		}
		if u, ok := usage[n.Name]; ok {
			rss = fmt.Sprintf("%.0fMiB cgroup, %.1f%% cpu", float64(u.MemBytes)/(1<<20), u.CPUPercent)
		}
		fmt.Fprintln(w, strings.Join(slices.Concat([]string{n.Name, n.Addr.String()}, s.values, []string{pid, rss, s.err}), "\t"))
	}
	return w.Flush()
}

// queryNode asks running node n for its kind's status values (ncols of
// them; none for a kind that tells nothing).
func queryNode(ctx context.Context, sd node.Statuser, n *plan.Node, ncols int) nodeStatus {
	s := nodeStatus{values: slices.Repeat([]string{"-"}, ncols)}
	if sd == nil {
		return s
	}
	v, err := sd.Status(ctx, n)
	if err != nil {
		s.err = err.Error()
		return s
	}
	copy(s.values, v)
	return s
}

// readRSS is a process's resident set for the table, "gone" if it ended.
func readRSS(pid int) string {
	p, err := collect.ReadProc(pid)
	if err != nil {
		return "gone"
	}
	return fmt.Sprintf("%.0fMiB", float64(p.RSSBytes)/(1<<20))
}
