package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/collect"
	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

func newStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [RUN_DIR...]",
		Short: "Per node: height, peers, mempool size, catching_up, pid, RSS",
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

type nodeStatus struct {
	height, peers, mempool string
	catchingUp             string
	err                    string
}

func printStatus(ctx context.Context, cmd *cobra.Command, path string) error {
	dir, err := rundir.Open(path)
	if err != nil {
		return err
	}
	var t plan.Testnet
	if err := dir.ReadJSON(rundir.Plan, &t); err != nil {
		return fmt.Errorf("status of %s: %w", path, err)
	}
	pids := proctable.NodePIDs(dir.Join(rundir.State))
	_ = testnet.ReachFromState(&t, dir.Join(rundir.State)) // where the runner published the nodes
	// A container runner's nodes: memory and CPU as their cgroups count it.
	usage, _ := infra.NodeUsage(ctx, dir.Join(rundir.State))
	sts := make([]nodeStatus, len(t.Nodes))
	var wg sync.WaitGroup
	for i, n := range t.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sts[i] = queryNode(ctx, n)
		}()
	}
	wg.Wait()
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s  %s\n", t.Name, dir.Path)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tADDRESS\tHEIGHT\tPEERS\tMEMPOOL\tCATCHING_UP\tPID\tRSS\tERROR")
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
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Addr, s.height, s.peers, s.mempool, s.catchingUp, pid, rss, s.err)
	}
	return w.Flush()
}

func queryNode(ctx context.Context, n *plan.Node) nodeStatus {
	c := cometrpc.New(n.RPCURL())
	s := nodeStatus{height: "-", peers: "-", mempool: "-", catchingUp: "-"}
	st, err := c.Status(ctx)
	if err != nil {
		s.err = err.Error()
		return s
	}
	s.height, s.catchingUp = strconv.FormatInt(st.Height, 10), strconv.FormatBool(st.CatchingUp)
	if p, err := c.Peers(ctx); err == nil {
		s.peers = strconv.Itoa(p)
	}
	if m, err := c.MempoolSize(ctx); err == nil {
		s.mempool = strconv.Itoa(m)
	}
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
