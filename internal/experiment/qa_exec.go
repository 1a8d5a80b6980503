package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// QARun is one QA as its caller prepared it: the builds resolved, the
// steps chosen and the plan accepted (the CLI prints and refuses plans; a
// QA needs two builds, which no manifest holds, so it is not a Config's
// NewExecutor). NewExecutor runs it through an Env like every other
// experiment: its steps are the search, compare and rotate experiments,
// measured by env.Lab, and its Result carries the exit code.
type QARun struct {
	// Index is the new QA's qa.json (builds, steps, plan, calibration), or
	// the one ReadQARun read back.
	Index    *rundir.QAIndex
	Config   *QA
	Manifest *manifest.Manifest // the steady testbed
	Rotate   *manifest.Manifest // the rotating testbed (nil: no rotate step)
	// BaselineFrom reuses that earlier QA directory's baseline search and
	// rotating runs (AnyBaseline: although its baseline is another build).
	BaselineFrom string
	AnyBaseline  bool
	// KeepHomes keeps the node homes of finished steps.
	KeepHomes bool
}

// rotateFile is the rotating testbed's manifest copy in a QA directory.
const rotateFile = "rotate.toml"

// ReadQARun reads an interrupted QA directory back to finish it: its
// qa.json, settings and manifest copies.
func ReadQARun(dir string) (*QARun, error) {
	x, err := rundir.QARecord.Read(dir)
	if err != nil {
		return nil, &UsageError{err}
	}
	r := &QARun{Index: x, Config: &QA{}}
	if err := json.Unmarshal(x.Config, r.Config); err != nil {
		return nil, fmt.Errorf("%s: config: %w", filepath.Join(dir, rundir.QAFile), err)
	}
	if r.Manifest, err = manifest.LoadFile(filepath.Join(dir, rundir.Manifest)); err != nil {
		return nil, err
	}
	if x.RotateManifest != "" {
		if r.Rotate, err = manifest.LoadFile(filepath.Join(dir, rotateFile)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// NewExecutor prepares the QA: a new one claims <time>-<name>-qa under
// env.Output (or env.Dir) when it runs; with env.Resume it finishes that
// directory (r from ReadQARun). env.Deadline is the budget's end:
// adaptive repeats stop in time for the steps after them.
func (r *QARun) NewExecutor(env Env) (Executor, error) {
	if env.Lab == nil {
		return nil, errors.New("qa: no lab to measure with")
	}
	if r.Index == nil || r.Config == nil || r.Manifest == nil {
		return nil, errors.New("qa: no index, settings or manifest")
	}
	if env.Resume == "" {
		if errs := r.Config.Validate(); len(errs) > 0 {
			return nil, &UsageError{fmt.Errorf("qa settings: %w", errors.Join(errs...))}
		}
	}
	return &qaExec{r: r, env: env, root: env.Resume}, nil
}

type qaExec struct {
	r    *QARun
	env  Env
	root string
}

func (e *qaExec) Run(ctx context.Context) (Result, error) {
	x := e.r.Index
	if e.root == "" {
		root, err := e.start()
		if err != nil {
			return Result{Kind: "qa", Dir: root}, err
		}
		e.root = root
	}
	fmt.Fprintf(e.env.log(), "qa directory: %s\n", e.root)
	err := runQA(ctx, x, qaOptions{
		Root: e.root, Config: e.r.Config, Manifest: e.r.Manifest, Rotate: e.r.Rotate,
		Lab: e.env.Lab, Deadline: e.env.Deadline, Cooldown: e.env.Cooldown, KeepHomes: e.r.KeepHomes,
		Log: e.env.log(), Now: e.env.now,
	})
	return QAOutcome(e.root, x), err
}

// start claims the QA's directory and writes its inputs and qa.json: a
// crash from here on leaves a directory --resume finishes.
func (e *qaExec) start() (string, error) {
	x, r := e.r.Index, e.r
	root, err := e.env.claim(r.Manifest.Name + "-qa")
	if err != nil {
		return "", fmt.Errorf("create qa directory: %w", err)
	}
	x.Started = e.env.now().UTC().Format(time.RFC3339)
	writes := []error{os.WriteFile(filepath.Join(root, rundir.Manifest), r.Manifest.Raw, 0o644)}
	if r.Rotate != nil {
		// The executor writes the rotating testbed's copy, so it names it.
		x.RotateManifest = r.Rotate.File
		writes = append(writes, os.WriteFile(filepath.Join(root, rotateFile), r.Rotate.Raw, 0o644))
	}
	if err := errors.Join(writes...); err != nil {
		return root, err
	}
	if r.BaselineFrom != "" {
		if err := e.reuse(root); err != nil {
			os.RemoveAll(root)
			return "", err
		}
	}
	return root, rundir.QARecord.Write(root, x)
}

// reuse takes the earlier QA's operating point (--baseline-from): its
// manifests must match this QA's.
func (e *qaExec) reuse(root string) error {
	r, from := e.r, e.r.BaselineFrom
	earlier, err := rundir.QARecord.Read(from)
	if err != nil {
		return &UsageError{fmt.Errorf("--baseline-from: %w", err)}
	}
	cur, old := [][]byte{r.Manifest.Raw}, [][]byte{}
	if b, err := os.ReadFile(filepath.Join(from, rundir.Manifest)); err == nil {
		old = append(old, b)
	}
	if r.Rotate != nil {
		cur = append(cur, r.Rotate.Raw)
		if b, err := os.ReadFile(filepath.Join(from, rotateFile)); err == nil {
			old = append(old, b)
		}
	}
	warns, err := ReuseOperatingPoint(r.Index, from, earlier, cur, old, r.AnyBaseline)
	if err != nil {
		return &UsageError{err}
	}
	for _, w := range warns {
		fmt.Fprintln(e.env.log(), "warning:", w)
	}
	r.Index.Warnings = append(r.Index.Warnings, warns...)
	return nil
}

// QAOutcome is a QA directory's Result: its overall Test Result as a
// verdict (Pass, Fail, Inconclusive), the failing scenarios as the why.
func QAOutcome(root string, x *rundir.QAIndex) Result {
	res := Result{Kind: "qa", Dir: root, Complete: x.Complete}
	var why []string
	for _, r := range x.Results {
		if r.Judged && r.Result != judge.ResultPass {
			why = append(why, fmt.Sprintf("%s %s", r.Scenario, r.Result))
		}
	}
	res.Why = "qa result " + string(x.Overall)
	if len(why) > 0 {
		res.Why += " (" + strings.Join(why, ", ") + ")"
	}
	switch x.Overall {
	case judge.ResultFail:
		res.Verdict = Fail
	case judge.ResultInconclusive:
		res.Verdict = Inconclusive
	case judge.ResultPass:
		res.Verdict = Pass
	}
	return res
}
