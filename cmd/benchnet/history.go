package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/history"
)

const historyFlagUsage = "history database (default $" + history.EnvPath + ", else ~/.cache/benchnet/" + history.FileName + " beside the release cache)"

func newHistoryCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "history",
		Short: "The results of every run, sweep, compare, soak and QA, across builds",
		Long: `history lists the series in the history database: one scenario on one
testbed on one machine, with how many builds and records it holds. Every run,
sweep, compare, soak and qa records its results there when it finishes
(unless --no-history); 'benchnet history add DIR…' records directories made
before. The database is SQLite: 'sqlite3 ~/.cache/benchnet/history.db' opens
it, and docs/history.md gives its schema and example queries.`,
		Example: `  benchnet history
  benchnet history add runs/20261123-101500-quickstart runs/20261124-080000-qa-qa
  benchnet history --history /data/lab-history.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return showHistory(cmd, args)
		},
	}
	c.PersistentFlags().String("history", "", historyFlagUsage)
	add := &cobra.Command{
		Use:   "add DIR...",
		Short: "Record finished run, soak, compare, sweep or QA directories in the history",
		Long: `add reads each finished directory (a run, a soak, a compare, a sweep or
search, a soak over variants, a QA) into records and stores them, one line per
record: added, extended (new repeats of a record already there) or skipped
(already there: adding a directory twice keeps one copy). An unfinished
directory is refused, saying what it lacks.`,
		Args: wrapArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := history.Open(cmd.Context(), historyPath(cmd))
			if err != nil {
				return err
			}
			defer s.Close()
			var errs []error
			for _, dir := range args {
				if _, err := addDir(cmd.Context(), s, dir, "", cmd.OutOrStdout()); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		},
	}
	c.AddCommand(add, newHistoryRunCmd())
	return c
}

// showHistory is `benchnet history` without a subcommand: the series in
// the store. The view across builds replaces this function.
func showHistory(cmd *cobra.Command, _ []string) error {
	path := historyPath(cmd)
	out := cmd.OutOrStdout()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "no history database at %s yet: runs record themselves when they finish; 'benchnet history add DIR…' records older ones\n", path)
		return nil
	}
	s, err := history.Open(cmd.Context(), path)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := s.Series(cmd.Context())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "history database: %s\n", s.Path())
	if len(series) == 0 {
		fmt.Fprintln(out, "no records yet")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTESTBED\tMACHINE\tCPU\tBUILDS\tRECORDS\tFIRST\tLAST")
	for _, x := range series {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s × %d\t%d\t%d\t%s\t%s\n", x.Scenario, x.TestbedHash, x.MachineKey, orDash(x.CPUModel), x.CPUs,
			x.Builds, x.Records, orDash(x.First), orDash(x.Last))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// historyPath is --history, else history.DefaultPath().
func historyPath(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("history"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return history.DefaultPath()
}

// addHistoryFlags gives a command that finishes with a directory its
// --history and --no-history (recordHistory reads them).
func addHistoryFlags(c *cobra.Command) {
	c.Flags().String("history", "", historyFlagUsage)
	c.Flags().Bool("no-history", false, "do not record the results in the history database")
}

// recordHistory records a command's finished directory in the history
// database, best effort: a failure is a warning, never the command's
// error, and the directory is untouched either way. Commands without
// addHistoryFlags, and --no-history, record nothing.
func recordHistory(cmd *cobra.Command, dir string) {
	off := cmd.Flags().Lookup("no-history")
	if off == nil || off.Value.String() == "true" || dir == "" {
		return
	}
	log := cmd.ErrOrStderr()
	if cmd.Context().Err() != nil {
		fmt.Fprintf(log, "history: %s not recorded (interrupted); once it is finished, 'benchnet history add %s' records it\n", dir, dir)
		return
	}
	// Its own bound: a writer waiting on another's lock must not hold the
	// command's exit for long.
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	path := historyPath(cmd)
	s, err := history.Open(ctx, path)
	if err != nil {
		fmt.Fprintf(log, "warning: history: not recorded: %v\n", err)
		return
	}
	defer s.Close()
	n, err := addDir(ctx, s, dir, benchnetVersion(), nil)
	if err != nil {
		fmt.Fprintf(log, "warning: history: not recorded: %v\n", err)
		return
	}
	fmt.Fprintf(log, "history: %d record(s) of %s in %s\n", n, dir, path)
}

// addDir reads dir into records and adds them, writing one line per
// record to out (nil: none); version, when known, is the benchnet that
// ran it. It returns the records added or extended. A directory that
// cannot be read is the caller's input: a usage error.
func addDir(ctx context.Context, s *history.Store, dir, version string, out io.Writer) (int, error) {
	b, err := history.FromRunDir(ctx, dir)
	if err != nil {
		return 0, usageError{err}
	}
	n := 0
	for _, r := range b.Records {
		r.Benchnet = version
		o, runs, err := s.Add(ctx, r)
		if err != nil {
			return n, err
		}
		if o != history.Skipped {
			n++
		}
		if out != nil {
			part := r.Part
			if part == "" {
				part = "(" + r.Kind + ")"
			}
			fmt.Fprintf(out, "%-8s %s  %s  %s, %d repeat(s), %d new\n", o, r.Source, part, history.BuildLabel(r.Builds), len(r.Runs), runs)
		}
	}
	if out != nil {
		for _, why := range b.Skipped {
			fmt.Fprintf(out, "left out %s\n", why)
		}
	}
	return n, nil
}
