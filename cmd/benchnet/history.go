package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/report/historyreport"
	"github.com/benchnet/benchnet/internal/rundir"
)

const historyFlagUsage = "history database (default $" + history.EnvPath + ", else ~/.cache/benchnet/" + history.FileName + " beside the release cache)"

// historyFlags are the view's flags.
type historyFlags struct {
	scenario, testbed, machine string
	metrics, order             []string
	output, csv                string
}

func newHistoryCmd() *cobra.Command {
	var f historyFlags
	c := &cobra.Command{
		Use:   "history [--scenario NAME] [--testbed HASH] [--machine KEY] [--metric M,...] [--order REF,...] [--csv FILE]",
		Short: "The results of every run, sweep, compare, soak and QA, across builds",
		Long: `history draws one series of the history database across builds: one
scenario on one testbed on one machine. Each judged metric is drawn over the
builds in release order (semver; Tendermint Core's v0.34 before CometBFT's;
the commits of a source tree in commit order), every repeat a point, with
the change points marked (their ratio and 95 % interval). A build recorded
in several sessions is a control: when it drifted between them, that
metric's change points are refused. It writes history.md, history.html and
one plot per metric into a new directory under -o, prints a summary, and
with --csv FILE every value for a spreadsheet.

With one series in the database it draws that one; with several it lists
them and asks for --scenario (and --testbed or --machine where a scenario
has several: results of two machines are never one series).

Every run, sweep, compare, soak and qa records its results there when it
finishes (unless --no-history); 'benchnet history add DIR…' records
directories made before. The database is SQLite: 'sqlite3
~/.cache/benchnet/history.db' opens it, and docs/history.md gives its schema,
example queries and what the view draws.`,
		Example: `  benchnet history
  benchnet history --scenario qa --metric busy_tps,tps --csv qa-history.csv
  benchnet history --scenario qa --order cometbft@v0.38.17,cometbft@v1.0.1,./cometbft
  benchnet history add runs/20261123-101500-quickstart runs/20261124-080000-qa-qa
  benchnet history --history /data/lab-history.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return showHistory(cmd, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "the series' scenario (the testbed manifest's name)")
	fl.StringVar(&f.testbed, "testbed", "", "the series' testbed hash (a prefix will do)")
	fl.StringVar(&f.machine, "machine", "", "the series' machine key (a prefix will do)")
	fl.StringSliceVar(&f.metrics, "metric", nil, "metrics to draw (default: busy_tps, tps, latency_avg, latency_p95, blocks_per_min where present; all: every judged metric)")
	fl.StringSliceVar(&f.order, "order", nil, "builds in this order first (labels, references, releases or commit prefixes), the rest after in release order")
	fl.StringVarP(&f.output, "output", "o", "runs", "root directory of the history directory (<time>-history-<scenario>)")
	fl.StringVar(&f.csv, "csv", "", "also write every value drawn to this CSV file")
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

// showHistory is `benchnet history` without a subcommand: the view of
// the series the flags select (internal/report/historyreport).
func showHistory(cmd *cobra.Command, f historyFlags) error {
	ctx := cmd.Context()
	path := historyPath(cmd)
	out := cmd.OutOrStdout()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "no history database at %s yet: runs record themselves when they finish; 'benchnet history add DIR…' records older ones\n", path)
		return nil
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := s.Series(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "history database: %s\n", s.Path())
	if len(series) == 0 {
		fmt.Fprintln(out, "no records yet")
		return nil
	}
	x, err := historyreport.Select(series, historyreport.Selection{Scenario: f.scenario, Testbed: f.testbed, Machine: f.machine})
	var choose *historyreport.ChooseError
	if errors.As(err, &choose) {
		if werr := historyreport.WriteSeries(out, choose.Choices); werr != nil {
			return werr
		}
	}
	if err != nil {
		return usageError{err}
	}
	recs, err := s.Records(ctx, history.Query{Scenario: x.Scenario, TestbedHash: x.TestbedHash, MachineKey: x.MachineKey})
	if err != nil {
		return err
	}
	view, err := historyreport.Build(ctx, x, recs, historyreport.Options{Metrics: f.metrics, Order: f.order, Commits: history.GitCommitOrder})
	var oerr *historyreport.OptionError
	if errors.As(err, &oerr) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	dir, err := rundir.ClaimStamped(f.output, "history-"+fileSafe(x.Scenario), time.Now())
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	files, err := historyreport.Write(view, dir)
	if err != nil {
		return err
	}
	view.Summary(out)
	fmt.Fprintf(out, "\nreport: %s (%s, %d plots)\n", files[0], filepath.Base(files[1]), len(files)-2)
	if f.csv != "" {
		if err := writeHistoryCSV(view, f.csv); err != nil {
			return usageError{fmt.Errorf("--csv %s: %w", f.csv, err)}
		}
		fmt.Fprintf(out, "csv: %s\n", f.csv)
	}
	return nil
}

func writeHistoryCSV(v *historyreport.View, path string) error {
	var b bytes.Buffer
	if err := v.WriteCSV(&b); err != nil {
		return err
	}
	return rundir.WriteAtomic(path, b.Bytes())
}

// fileSafe keeps a name to the characters a directory name takes as is.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, s)
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

// finishDir ends a command's finished directory: its sheet (one row per
// run, rundir.SheetFile, which the reports link) and its record in the
// history database. Both best effort: a failure is a warning, never the
// command's error. Commands without addHistoryFlags, and --no-history,
// record nothing in the history (the sheet is still written).
func finishDir(cmd *cobra.Command, dir string) {
	writeSheet(cmd, dir)
	recordHistory(cmd, dir)
}

// writeSheet writes dir's sheet, best effort.
func writeSheet(cmd *cobra.Command, dir string) {
	if dir == "" || cmd.Context().Err() != nil {
		return
	}
	if _, err := writeExport(cmd.Context(), io.Discard, cmd.ErrOrStderr(), filepath.Join(dir, rundir.SheetFile), "csv", dir); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s not written: %v\n", rundir.SheetFile, err)
	}
}

// recordHistory records a command's finished directory in the history
// database, best effort: a failure is a warning, never the command's
// error, and the directory is untouched either way.
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
