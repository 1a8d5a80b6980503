package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/report"
)

// experimentEnv is the env every experiment command runs with: real
// testnets, run directories under --output, logs on stderr.
func experimentEnv(up *upFlags, scrape time.Duration) experiment.Env {
	return experiment.Env{
		Lab:    &experiment.LiveLab{Up: up.options(), Scrape: scrape, Log: os.Stderr, Progress: os.Stderr},
		Output: up.output,
		Log:    os.Stderr,
	}
}

// usage marks an executor's refusal of its input as a usage error (exit 2).
func usage(err error) error {
	var u *experiment.UsageError
	if errors.As(err, &u) {
		return usageError{u.Err}
	}
	return err
}

// runExperiment runs x, renders its directory's report (report.RenderDir,
// as `benchnet report DIR` would), prints where it is and records it in
// the history (recordHistory: best effort); the error carries
// the verdict (exit 3 or 4 at the root) after any failure of the run.
func runExperiment(cmd *cobra.Command, x experiment.Executor) (experiment.Result, error) {
	res, runErr := x.Run(cmd.Context())
	if res.Dir == "" {
		return res, runErr
	}
	files, rerr := report.RenderDir(res.Dir, "")
	fmt.Fprintf(cmd.OutOrStdout(), "%s directory: %s\n", res.Kind, res.Dir)
	for _, f := range files {
		fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", f)
	}
	finishDir(cmd, res.Dir)
	return res, errors.Join(runErr, rerr, res.Err())
}
