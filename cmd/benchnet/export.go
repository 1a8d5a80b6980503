package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/export"
	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/rundir"
)

// exportFormats are the formats `benchnet export` writes, with the file
// each writes into the directory by default.
var exportFormats = map[string]string{
	"openmetrics": rundir.OpenMetricsFile,
	"loadtime":    rundir.LoadtimeFile,
	"csv":         rundir.SheetFile,
}

func newExportCmd() *cobra.Command {
	var format, out, promData string
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write a run in the ecosystem's formats: OpenMetrics (promtool backfill), loadtime report's CSV, one sheet across runs",
		Long: `export writes a finished directory in a format other tools read:

  openmetrics  the run's scraped series with Prometheus' target labels
               (job = the node, instance = its metrics address, plus role
               and zone) and the harness's series under node_exporter's and
               process-exporter's names (job="benchnet"), as OpenMetrics text
               that 'promtool tsdb create-blocks-from openmetrics' accepts.
               --prometheus-data DIR runs that backfill into DIR (promtool
               from Debian's prometheus package); a Prometheus started with
               --storage.tsdb.path DIR then serves the run, for Grafana
               (dashboards/benchnet.json) or CometBFT's prometheus_plotter.py.
  loadtime     CometBFT's 'loadtime report --csv' rows (experiment_id,
               block_time, duration_ns, tx_hash, connections, rate, size) of
               every run at or under DIR: a sweep gives one experiment per
               cell, so latency_throughput.py draws one point per cell and
               latency_plotter.py runs unmodified.
  csv          one row per run of a run, soak, sweep, compare or qa directory,
               or of every such directory under a parent folder: the
               testbed, the load, the build and every judged metric with its
               unit (the rows 'benchnet history' records).

The file goes into DIR (metrics.om, loadtime.csv, summary.csv) unless -o
names another; -o - writes to stdout.`,
		Example: `  benchnet export runs/20261128-120000-quickstart --format openmetrics --prometheus-data /tmp/prom
  benchnet export runs/20261128-120000-sweep-qa --format loadtime
  benchnet export runs --format csv -o all-runs.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			name, ok := exportFormats[format]
			if !ok {
				return usageError{fmt.Errorf("--format %q: want openmetrics, loadtime or csv", format)}
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usageError{fmt.Errorf("%s is not a directory", dir)}
			}
			if promData != "" && format != "openmetrics" {
				return usageError{fmt.Errorf("--prometheus-data backfills the openmetrics export: give --format openmetrics")}
			}
			if promData != "" && out == "-" {
				return usageError{fmt.Errorf("--prometheus-data needs the export in a file: leave -o out or name a file")}
			}
			if out == "" {
				out = filepath.Join(dir, name)
			}
			what, err := writeExport(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), out, format, dir)
			if err != nil {
				return err
			}
			if out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%s)\n", out, what)
			}
			if promData != "" {
				return backfill(cmd.Context(), cmd.ErrOrStderr(), out, promData)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "openmetrics, loadtime or csv")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (- for stdout; default: DIR/metrics.om, DIR/loadtime.csv or DIR/summary.csv)")
	cmd.Flags().StringVar(&promData, "prometheus-data", "", "backfill the openmetrics export into this Prometheus data directory (promtool tsdb create-blocks-from openmetrics)")
	return cmd
}

// writeExport writes format of dir to out (a file, written whole then
// renamed into place, or "-" for stdout) and says what it wrote; log gets
// what the sheet left out.
func writeExport(ctx context.Context, stdout, log io.Writer, out, format, dir string) (string, error) {
	write := func(w io.Writer) (string, error) {
		switch format {
		case "openmetrics":
			return "OpenMetrics", export.OpenMetrics(w, dir)
		case "loadtime":
			runs, err := export.Loadtime(w, dir)
			return fmt.Sprintf("loadtime rows of %d run(s)", len(runs)), err
		default:
			skipped, err := history.Sheet(ctx, w, dir)
			for _, s := range skipped {
				fmt.Fprintf(log, "export: left out %s\n", s)
			}
			return "one row per run", err
		}
	}
	if out == "-" {
		return write(stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	what, err := write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("export %s of %s: %w", format, dir, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	return what, os.Rename(tmp.Name(), out)
}

// backfill runs promtool's OpenMetrics backfill of file into data.
func backfill(ctx context.Context, log io.Writer, file, data string) error {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		return fmt.Errorf("--prometheus-data: promtool not found (Debian's prometheus package has it; 'benchnet setup --tests' installs it): %w", err)
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	c := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", file, data)
	c.Stdout, c.Stderr = log, log
	if err := c.Run(); err != nil {
		return fmt.Errorf("promtool tsdb create-blocks-from openmetrics %s %s: %w", file, data, err)
	}
	fmt.Fprintf(log, "backfilled into %s: prometheus --storage.tsdb.path %s --config.file <a config with no scrape jobs> serves the run\n", data, data)
	return nil
}
