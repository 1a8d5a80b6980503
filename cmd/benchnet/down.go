package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/infra"
	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
	"github.com/benchnet/benchnet/internal/promserver"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/testnet"
)

func newDownCmd() *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "down [RUN_DIR...]",
		Short: "Stop every node and remove every namespace, link and bridge a run created",
		Long: `down tears down runs from their state files, which record every resource as
it is created: it works after the harness was killed with -9. When the benchnet
process that owns a run is still alive (a foreground 'up', a 'run' under way),
down asks it to end the run (SIGTERM), waits for it to exit (up to 90 s), then
removes whatever is left. With no argument
it tears down the live runs whose directories are under the current
directory and lists the others (a 'down' meant for one testnet must not end
a QA running beside it); --all tears down every live run on this machine and
also sweeps any leftover resource named with benchnet's prefix, state file
or not. The run directories stay.`,
		Example: `  benchnet down
  benchnet down runs/20261123-101500-quickstart
  benchnet down runs/20261123-101500-quickstart/state.json
  benchnet down --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			states := statePaths(args)
			if len(args) == 0 {
				active, err := proctable.ActiveRuns()
				if err != nil {
					return err
				}
				states = active
				if !all {
					cwd, err := os.Getwd()
					if err != nil {
						return err
					}
					var others []string
					states, others = runsUnder(active, cwd)
					for _, o := range others {
						fmt.Fprintf(cmd.OutOrStdout(), "left running (not under %s): %s ('benchnet down %s' ends it, --all ends every run)\n", cwd, filepath.Dir(o), filepath.Dir(o))
					}
				}
			}
			var errs []error
			for _, s := range states {
				// The run first: a live owner stops its own Prometheus as it
				// ends; then whatever Prometheus is left (owner killed).
				// The run id first, while the state file is whole: it names
				// the run directory's bind mount, if its nodes reached it
				// through one (a killed harness did not remove it).
				st, serr := statefile.Read(s)
				derr := infra.Down(cmd.Context(), s, cmd.OutOrStdout())
				if derr == nil && serr == nil {
					derr = testnet.ReleaseReach(st.Doc.RunID)
				}
				if err := promserver.Kill(filepath.Dir(s)); err != nil {
					errs = append(errs, fmt.Errorf("down %s: prometheus: %w", filepath.Dir(s), err))
				}
				if derr != nil {
					errs = append(errs, fmt.Errorf("down %s: %w", filepath.Dir(s), derr))
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "down: %s\n", filepath.Dir(s))
			}
			if all {
				// Every runner's leftovers: namespaces and links with our
				// prefix, objects labelled benchnet.run.
				if err := infra.SweepAll(cmd.Context()); err != nil {
					errs = append(errs, err)
				}
				if err := testnet.SweepReach(); err != nil {
					errs = append(errs, err)
				}
			}
			if len(states) == 0 && !all {
				fmt.Fprintln(cmd.OutOrStdout(), "no live run")
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "with no argument, every live run on this machine (not only those under this directory); also remove leftovers with benchnet's prefix that no state file records")
	return c
}

// runsUnder splits live runs' state files into those whose run directory
// lies under dir and the others.
func runsUnder(states []string, dir string) (under, others []string) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	for _, s := range states {
		p, perr := filepath.Abs(s)
		if perr == nil {
			if q, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
				p = filepath.Join(q, filepath.Base(p))
			}
		}
		rel, rerr := filepath.Rel(root, p)
		if err == nil && perr == nil && rerr == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			under = append(under, s)
		} else {
			others = append(others, s)
		}
	}
	return under, others
}

// statePaths are the state files of down's arguments: a run directory, or
// its state.json itself (as messages print it).
func statePaths(args []string) []string {
	var states []string
	for _, a := range args {
		if filepath.Base(a) == rundir.State {
			states = append(states, a)
			continue
		}
		states = append(states, filepath.Join(a, rundir.State))
	}
	return states
}
