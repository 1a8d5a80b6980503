package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Every experiment (sweep, search, compare, soak, rotate; qa composes them)
// runs one way, k6's: a registered Config with Validate, then
// NewExecutor(manifest, env) and Run(ctx). Each one
//   - measures through env.Lab (real testnets in package live, a fake in
//     tests);
//   - claims its directory through env (a new stamped one under
//     env.Output, the one a parent claimed for it, or env.Resume's);
//   - writes its record (rundir.Record) after every measurement, so Ctrl-C
//     keeps what finished: Run then returns the Result so far and ctx's
//     cause, and a Run with env.Resume set finishes the rest;
//   - ends in a Verdict, whose exit code is Verdict.ExitCode.
// Reports are rendered by the caller from the directory alone
// (report.RenderDir dispatches on the record found in it).

// Runnable is a Config that runs.
type Runnable interface {
	Config
	// NewExecutor prepares the experiment on manifest m; it refuses bad
	// input (a usage error) before anything starts.
	NewExecutor(m *manifest.Manifest, env Env) (Executor, error)
}

// Executor runs one experiment.
type Executor interface {
	// Run measures until the experiment is done, ctx is cancelled or a
	// measurement fails. The Result is valid (Dir set) whenever the
	// directory was claimed, also alongside an error.
	Run(ctx context.Context) (Result, error)
}

// Lab makes measurements. live.Lab brings real testnets up.
type Lab interface {
	// Open brings m's testnet up, its run directory under dir, to measure
	// several loads on (sweep cells).
	Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error)
	// Steady is one run of m on its own testnet (`benchnet run`), its run
	// directory under dir; it returns the run directory, also when the run
	// failed after creating it.
	Steady(ctx context.Context, m *manifest.Manifest, dir string) (runDir string, err error)
}

// Env is what every experiment runs with; a parent passes its own down,
// with Sub, to the experiments it composes.
type Env struct {
	Lab Lab
	// Output is the root under which a new experiment claims
	// <timestamp>-<name>-<kind>/ (default "runs").
	Output string
	// Dir, when set, is the (claimed, empty) directory the experiment
	// writes into instead of a new one under Output: a step of a parent.
	Dir string
	// Resume is an existing directory of this experiment to finish.
	Resume string
	// Cooldown bounds the settle between two measurements: until every
	// mempool is empty and the chain is back at its unloaded pace, at most
	// this long (0: the experiment's own setting).
	Cooldown time.Duration
	// Deadline, when set, bounds the work an experiment adds adaptively
	// (compare's extra rounds): none starts that would end past it.
	Deadline time.Time
	Log      io.Writer
	Now      func() time.Time
}

func (e Env) log() io.Writer {
	if e.Log == nil {
		return io.Discard
	}
	return e.Log
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e Env) output() string {
	if e.Output == "" {
		return "runs"
	}
	return e.Output
}

// Sub claims parent/name (name-2 … when taken) for a step of a composed
// experiment and returns the env that runs the step there.
func (e Env) Sub(parent, name string) (Env, error) {
	dir, err := rundir.Claim(parent, name)
	if err != nil {
		return Env{}, err
	}
	sub := e
	sub.Dir, sub.Resume = dir, ""
	return sub, nil
}

// ResumeIn returns the env that finishes the step in dir (a parent's
// --resume: its step directories exist already).
func (e Env) ResumeIn(dir string) Env {
	sub := e
	sub.Dir, sub.Resume = "", dir
	return sub
}

// claim makes the experiment's directory: env.Dir (with subs inside), or a
// new <timestamp>-<name> under env.Output.
func (e Env) claim(name string, subs ...string) (string, error) {
	if e.Dir == "" {
		return rundir.ClaimStamped(e.output(), name, e.now(), subs...)
	}
	for _, s := range subs {
		if err := os.MkdirAll(filepath.Join(e.Dir, s), 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", e.Dir, err)
		}
	}
	return filepath.Abs(e.Dir)
}

// Verdict is an experiment's outcome.
type Verdict string

// Verdicts. An experiment without a pass/fail rule (a grid, a soak's decay
// fit) passes when it finished.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"         // a regression, a threshold, a cycle that never caught up
	Inconclusive Verdict = "inconclusive" // the data cannot decide
)

// ExitCode is the process exit code of a verdict (judge's one list).
func (v Verdict) ExitCode() int {
	switch v {
	case Fail:
		return judge.ExitRegression
	case Inconclusive:
		return judge.ExitInconclusive
	}
	return judge.ExitPass
}

// Result is what an experiment ended in.
type Result struct {
	Kind string // sweep, search, compare, soak, rotate, qa
	// Dir is the experiment's directory (its record inside); a soak's and a
	// rotate's is their run directory.
	Dir      string
	Complete bool
	Verdict  Verdict
	// Why says in one line what decided the verdict.
	Why string
}

// Err is the error a verdict other than Pass stands for (nil for Pass): a
// *VerdictError, which the CLI maps to the verdict's exit code.
func (r Result) Err() error {
	if r.Verdict == Pass || r.Verdict == "" {
		return nil
	}
	return &VerdictError{Verdict: r.Verdict, Msg: r.Why}
}

// VerdictError carries a failed or inconclusive verdict to the CLI's root.
type VerdictError struct {
	Verdict Verdict
	Msg     string
}

func (e *VerdictError) Error() string {
	if e.Msg == "" {
		return string(e.Verdict)
	}
	return fmt.Sprintf("%s: %s", e.Verdict, e.Msg)
}

// ExitCodeOf is the exit code a verdict inside err stands for; ok is
// false when err carries none.
func ExitCodeOf(err error) (code int, ok bool) {
	var ve *VerdictError
	if errors.As(err, &ve) {
		return ve.Verdict.ExitCode(), true
	}
	return 0, false
}

// interrupted is ctx's cause when ctx is done, else err.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// loadCopy reads the manifest copy an experiment directory holds, for a
// resume, and resolves its release references again (a source tree or a
// file: binary must be checked before a plan is resolved). Relative
// references resolve against the copy's directory: an experiment to be
// resumed elsewhere should name trees by absolute path.
func loadCopy(dir string) (*manifest.Manifest, error) {
	m, err := manifest.LoadFile(filepath.Join(dir, rundir.Manifest))
	if err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", dir, err)
	}
	if err := m.CheckReleases(context.Background()); err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", dir, err)
	}
	return m, nil
}
