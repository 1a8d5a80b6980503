// Command benchnet is a QA lab for BFT-consensus and gossip networks: a TOML
// manifest becomes a testnet of real nodes, one network namespace each, under
// an exactly accounted open-loop load, ending in a report.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
)

// Exit codes, resolved once here at the root.
const (
	exitOK           = 0
	exitFailure      = 1                      // the run or the infrastructure failed
	exitUsage        = 2                      // bad flags or an invalid manifest
	exitThreshold    = judge.ExitRegression   // 3: a threshold or regression verdict failed
	exitInconclusive = judge.ExitInconclusive // 4: the data cannot decide
	exitInterrupted  = 130
)

// errInterrupted is the cause of the root context's cancellation on Ctrl-C.
var errInterrupted = errors.New("interrupted")

// usageError marks errors that are the user's input, not the run's fault.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	// SIGTERM is also how `benchnet down` asks the process that owns a run
	// to end it; SIGHUP (the terminal of a foreground `up` closed) would
	// otherwise kill the harness and leave nodes behind with dead links.
	// Under nohup SIGHUP stays ignored: Notify would undo that.
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(sigs, syscall.SIGHUP)
	}
	defer signal.Stop(sigs)
	go func() {
		// First signal: stop load, flush, tear down in order. Second: exit now;
		// the run directory stays readable and `benchnet down` cleans up.
		cause := errInterrupted
		if sig := <-sigs; sig == os.Interrupt {
			fmt.Fprintln(os.Stderr, "\ninterrupted: stopping and cleaning up (press Ctrl-C again to exit at once)")
		} else {
			fmt.Fprintf(os.Stderr, "\n%v: stopping and cleaning up (signal again to exit at once)\n", sig)
			cause = fmt.Errorf("%w by signal (%v)", errInterrupted, sig)
		}
		cancel(cause)
		<-sigs
		fmt.Fprintln(os.Stderr, "interrupted twice: exiting; run `benchnet down` to remove what is left")
		os.Exit(exitInterrupted)
	}()

	defer startProfile()()
	root := newRootCmd()
	style := exitStyleBenchnet
	addExitStyleFlag(root, &style)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return checkExitStyle(style) }
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitCode(ctx, err)
	if style == exitStyleGitBisect {
		return gitBisectExit(code)
	}
	return code
}

func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "benchnet:", err)
	var merrs manifest.Errors
	var uerr usageError
	var xerr *experiment.UsageError
	verdict, isVerdict := experiment.ExitCodeOf(err)
	var cexit childExit
	switch {
	case errors.As(err, &cexit): // node linkem-agent: the node's own status
		return cexit.code
	case errors.Is(context.Cause(ctx), errInterrupted):
		return exitInterrupted
	case errors.As(err, &merrs), errors.As(err, &uerr), errors.As(err, &xerr):
		return exitUsage
	case errors.Is(err, errThreshold):
		return exitThreshold
	case isVerdict && !hasOtherFailure(err):
		// An experiment's verdict (experiment.Verdict.ExitCode), unless the
		// run itself failed too.
		return verdict
	default:
		return exitFailure
	}
}

// hasOtherFailure reports whether err joins anything besides a verdict.
func hasOtherFailure(err error) bool {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	for _, e := range j.Unwrap() {
		if _, isVerdict := experiment.ExitCodeOf(e); !isVerdict && e != nil {
			return true
		}
	}
	return false
}

// errThreshold is wrapped by verdicts that fail a run on purpose.
var errThreshold = errors.New("threshold failed")

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "benchnet",
		Short: "QA lab for BFT-consensus and gossip networks",
		Long: `benchnet turns a TOML manifest into a testnet of real nodes (CometBFT or
Tendermint releases, or our own gossipsub hosts), one network namespace or
Docker container per node on this machine, or one Docker Swarm service per
node across a swarm's engines ([infra] runner, --runner), drives an exactly
accounted open-loop load, and writes a run directory with a report.

Exit codes: 0 ok, 1 failure, 2 usage or invalid manifest, 3 threshold or
regression failed, 4 inconclusive (the data cannot decide), 130 interrupted.
--exit-codes git-bisect maps them onto git bisect run's protocol (0 good,
1 bad, 125 skip, 128 abort).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath())}
	})
	root.AddCommand(newPlanCmd(), newBuildCmd(), newSetupCmd(), newUpCmd(), newRunCmd(), newLoadCmd(), newSweepCmd(), newSoakCmd(), newStatusCmd(), newDownCmd(), newAnalyzeCmd(), newReportCmd(), newCompareCmd(), newNodeCmd(), newQACmd(), newCalibrateCmd(), newHistoryCmd(), newBisectCmd(), newExportCmd())
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
}

// wrapArgs makes argument-count errors usage errors (exit 2).
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath())}
		}
		return nil
	}
}
