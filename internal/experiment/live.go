package experiment

// Live measurements: a testnet opened from a manifest (testnet.Up), a cell
// measured with scenario.MeasureLoad, a whole run with scenario.Steady.
// (It was package experiment/live while the report read sweep directories
// through package experiment; the records are rundir's now.)

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/rundir"
	"github.com/benchnet/benchnet/internal/scenario"
	"github.com/benchnet/benchnet/internal/testnet"
)

// Live opens real testnets from a manifest.
type Live struct {
	Manifest *manifest.Manifest
	Up       testnet.Options // Output is set to the sweep's testnets/ directory
	Scrape   time.Duration   // metrics and /proc sampling per cell (default 1 s)
	Log      io.Writer
	Progress io.Writer // per-second progress line; nil: none
}

// LiveLab measures on real testnets: the Lab of the CLI.
type LiveLab struct {
	Up       testnet.Options // Output is set per measurement
	Scrape   time.Duration   // metrics and /proc sampling (default 1 s)
	Log      io.Writer
	Progress io.Writer // per-second progress line; nil: none
}

// Open brings m's testnet up, its run directory under dir.
func (l *LiveLab) Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error) {
	lv := &Live{Manifest: m, Up: l.Up, Scrape: l.Scrape, Log: l.Log, Progress: l.Progress}
	return lv.open(ctx, dir)
}

// Steady is `benchnet run` of m, its run directory under dir.
func (l *LiveLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	o := l.Up
	o.Output = dir
	out, err := scenario.Steady(ctx, m, scenario.Options{Up: o, ScrapeInterval: l.Scrape, Log: l.Log, Progress: l.Progress, Judge: recordThresholds(m, l.Log)})
	return out.RunDir, err
}

// Opener returns an Opener whose testnets' run directories land in dir's
// testnets/ folder.
func (lv *Live) Opener(d *Dir) Opener {
	return func(ctx context.Context) (Testnet, error) {
		return lv.open(ctx, filepath.Join(d.Path, rundir.SweepNets))
	}
}

func (lv *Live) open(ctx context.Context, dir string) (Testnet, error) {
	opts := lv.Up
	opts.Output = dir
	if opts.Log == nil {
		opts.Log = lv.Log
	}
	tn, err := testnet.Up(ctx, lv.Manifest, opts)
	if err != nil {
		return nil, err
	}
	return &liveEnv{lv: lv, tn: tn}, nil
}

type liveEnv struct {
	lv *Live
	tn *testnet.Testnet
}

func (e *liveEnv) RunDir() string { return e.tn.Dir.Path }

func (e *liveEnv) Close(ctx context.Context) error { return e.tn.Down(ctx) }

// Measure is `benchnet load` into dir: the cell's inputs (manifest, the plan
// with the cell's load, the testnet it ran on), collectors, then
// scenario.MeasureLoad.
func (e *liveEnv) Measure(ctx context.Context, dir *rundir.Dir, l manifest.Load) (*rundir.Results, error) {
	p := *e.tn.Plan
	p.Load = l
	pj, err := p.JSON()
	if err != nil {
		return nil, err
	}
	if err := errors.Join(dir.WriteFile(rundir.Manifest, e.lv.Manifest.Raw), dir.WriteFile(rundir.Plan, pj),
		dir.WriteFile("testnet.txt", []byte(e.tn.Dir.Path+"\n"))); err != nil {
		return nil, err
	}
	scrape := e.lv.Scrape
	if scrape == 0 {
		scrape = time.Second
	}
	log := e.lv.Log
	if log == nil {
		log = io.Discard
	}
	stop := scenario.StartCollector(ctx, dir, &p, func(node string) int { return e.tn.PIDs()[node] }, e.tn.Running,
		scenario.Machines(ctx, e.tn, log), scrape, log)
	res, err := scenario.MeasureRunning(ctx, dir, &p, l, testnet.NewRunID(), log, e.lv.Progress, e.tn.NotStarted)
	stop()
	return res, err
}

// Cooldown lets the testnet settle between cells by its kind's rule
// (node.Settler: CometBFT's mempools empty and two blocks past); a kind
// without one needs no wait.
func (e *liveEnv) Cooldown(ctx context.Context, limit time.Duration) (time.Duration, error) {
	s, ok := e.tn.Driver.(node.Settler)
	if !ok {
		return 0, nil
	}
	return s.Settle(ctx, e.tn.Plan, limit)
}
