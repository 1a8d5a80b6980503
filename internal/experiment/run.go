package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Testnet is a running testnet a sweep measures on (Lab.Open).
type Testnet interface {
	// Measure applies one load to the testnet, writing an ordinary run
	// directory into dir, and returns its results (with ctx's cause when
	// interrupted: the results then cover what was sent).
	Measure(ctx context.Context, dir *rundir.Dir, l manifest.Load) (*rundir.Results, error)
	// Cooldown waits until every node's mempool is empty and two blocks have
	// passed, at most limit; it returns how long it waited.
	Cooldown(ctx context.Context, limit time.Duration) (time.Duration, error)
	// RunDir is the testnet's own run directory.
	RunDir() string
	// Close tears the testnet down.
	Close(ctx context.Context) error
}

// Opener brings a testnet up.
type Opener func(ctx context.Context) (Testnet, error)

// Runner runs a sweep directory's cells until none is left.
type Runner struct {
	Dir *Dir
	// Base is the manifest's load: size, target, transport, format… Each
	// cell overrides connections, rate and duration.
	Base manifest.Load
	Open Opener
	Log  io.Writer
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Judge, when set, records the manifest's [thresholds] in each measured
	// cell's results.json (recordThresholds); the sweep's verdict gathers them.
	Judge func(dir string) error

	// Variants bring up each variant's testnet, with its load, for a grid
	// over [variants]: a cell of variant v runs on Variants[v] (Open and
	// Base serve the cells without a variant).
	Variants map[string]VariantEnv

	env        Testnet   // the testnet up now, if any
	envVariant string    // the variant it runs
	measured   int       // cells measured on it
	lastEnd    time.Time // when its last cell ended
	closeAfter bool      // tear the testnet down after every cell
}

// NewIndex starts the index of a new sweep.
func NewIndex(name string, seed int64, cfg Sweep, now time.Time) rundir.SweepIndex {
	x := rundir.SweepIndex{SchemaVersion: rundir.SweepSchema, Kind: "grid", Name: name, Config: rundir.SweepConfig(cfg), Seed: seed,
		Started: now.UTC().Format(time.RFC3339), Testnets: []string{}}
	if cfg.Search {
		x.Kind = "search"
	} else {
		x.Cells = cfg.Order(seed)
	}
	return x
}

// Run measures every cell that is not done yet (pending, interrupted or
// failed: --resume calls it again on the same directory). It writes
// sweep.json after every cell and stops at the first failed cell or on
// ctx's cancellation, keeping every finished cell.
func (r *Runner) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, r.closeEnv(ctx)) }()
	for {
		more, err := r.step(ctx)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return r.finish()
}

// finish marks the sweep complete.
func (r *Runner) finish() error {
	r.defaults()
	x := &r.Dir.Index
	x.Complete = true
	x.Finished = r.Now().UTC().Format(time.RFC3339)
	return r.Dir.Save()
}

func (r *Runner) defaults() {
	if r.Log == nil {
		r.Log = io.Discard
	}
	if r.Now == nil {
		r.Now = time.Now
	}
}

// closeEnv tears the current testnet down, if any.
func (r *Runner) closeEnv(ctx context.Context) error {
	if r.env == nil {
		return nil
	}
	r.defaults()
	env := r.env
	r.env = nil
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := env.Close(dctx); err != nil {
		return fmt.Errorf("down %s: %w", env.RunDir(), err)
	}
	fmt.Fprintf(r.Log, "testnet down\n")
	return nil
}

// step measures the next cell (false: none is left). With Fresh (or
// closeAfter) the cell's testnet is torn down right after it, so no testnet
// idles between cells (and SearchVariants never runs two at once).
// upError is a run whose testnet did not come up: nothing was measured,
// and the same run may be tried again.
type upError struct{ err error }

func (e *upError) Error() string { return "up: " + e.err.Error() }
func (e *upError) Unwrap() error { return e.err }

func (r *Runner) step(ctx context.Context) (bool, error) {
	r.defaults()
	x := &r.Dir.Index
	cfg := (*Sweep)(&x.Config)
	i, ok := r.next()
	if !ok {
		return false, nil
	}
	cell := &x.Cells[i]
	open, base := r.Open, r.Base
	if cell.Variant != "" {
		ve, ok := r.Variants[cell.Variant]
		if !ok || ve.Open == nil {
			return false, fmt.Errorf("cell %s: no testnet for variant %q", cell.ID, cell.Variant)
		}
		open, base = ve.Open, ve.Base
	}
	var cooldown time.Duration
	if r.env == nil || cfg.Fresh || cell.Variant != r.envVariant {
		// Another variant's cell: its testnet goes down first, so only one
		// testnet is ever up.
		if err := r.closeEnv(ctx); err != nil {
			return false, err
		}
		upStart := r.Now()
		env, err := open(ctx)
		if err != nil {
			if ctx.Err() == nil {
				cell.Notes = append(cell.Notes, "up failed: "+err.Error())
			}
			return false, &upError{err}
		}
		r.env, r.envVariant = env, cell.Variant
		cell.UpSec = round3(r.Now().Sub(upStart).Seconds())
		rel, _ := filepath.Rel(r.Dir.Path, env.RunDir())
		x.Testnets = append(x.Testnets, rel)
		r.measured, r.lastEnd = 0, time.Time{}
	} else {
		cd, cerr := r.env.Cooldown(ctx, cfg.Cooldown.Duration)
		cooldown = cd
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		if cerr != nil {
			cell.Notes = append(cell.Notes, "cool-down incomplete: "+cerr.Error())
			fmt.Fprintf(r.Log, "warning: cool-down: %v\n", cerr)
		}
	}
	l := cfg.CellLoad(base, cell.Connections, cell.Rate)
	if cell.Duration != nil {
		l.Duration = *cell.Duration
	}
	if r.measured > 0 {
		// The cool-down already proved every node commits with an empty
		// mempool: a warm-up would only add two more blocks.
		l.Warmup = rundir.Duration{}
	}
	cdir, err := r.cellDir(cell)
	if err != nil {
		return false, err
	}
	start := r.Now()
	if !r.lastEnd.IsZero() {
		cell.OverheadSec = round3(start.Sub(r.lastEnd).Seconds() - cooldown.Seconds())
	}
	cell.CooldownSec = round3(cooldown.Seconds())
	cell.StartedAt = start.UTC().Format(time.RFC3339)
	cell.Error = ""
	what := ""
	if cell.Variant != "" {
		what = cell.Variant + ": "
	}
	if cell.Duration != nil {
		what += cell.Duration.String() + " at "
	}
	fmt.Fprintf(r.Log, "\n== cell %d/%d: %sc=%d r=%g tx/s (repeat %d) -> %s\n", cell.Order, max(len(x.Cells), cell.Order), what, cell.Connections, cell.Rate, cell.Repeat, cell.RunDir)
	res, merr := r.env.Measure(ctx, cdir, l)
	_ = cdir.Close()
	r.measured++
	r.lastEnd = r.Now()
	cell.WallSec = round3(r.lastEnd.Sub(start).Seconds())
	if res != nil {
		fig, runInvalid := Figures(res, cell.Connections, cell.Rate)
		pace(cdir, &fig)
		cell.Figures, cell.RunInvalid = &fig, runInvalid
		cell.Expected = expected(cdir.Path)
	}
	switch {
	case ctx.Err() != nil:
		cell.Status = rundir.CellInterrupted
		cell.Notes = append(cell.Notes, "interrupted during the load: re-run by --resume")
		if serr := r.Dir.Save(); serr != nil {
			return false, errors.Join(context.Cause(ctx), serr)
		}
		return false, context.Cause(ctx)
	case merr != nil:
		cell.Status, cell.Error = rundir.CellFailed, merr.Error()
		if serr := r.Dir.Save(); serr != nil {
			return false, errors.Join(merr, serr)
		}
		return false, fmt.Errorf("cell %s: %w", cell.ID, merr)
	}
	cell.Status = rundir.CellDone
	if r.Judge != nil {
		if jerr := r.Judge(cdir.Path); jerr != nil {
			cell.Notes = append(cell.Notes, "thresholds not judged: "+jerr.Error())
		}
	}
	if err := r.Dir.Save(); err != nil {
		return false, err
	}
	if v := cell.Verdict; v != nil {
		fmt.Fprintf(r.Log, "cell %s: committed %d of %d, %.1f tx/s, p50 %.0f ms: %s %s\n", cell.ID, cell.Figures.Committed, cell.Figures.Sent,
			cell.Figures.TPS, cell.Figures.P50Ms, v.State, strings.Join(v.Reasons, "; "))
	}
	if cfg.Fresh || r.closeAfter {
		downStart := r.Now()
		if err := r.closeEnv(ctx); err != nil {
			return false, err
		}
		cell.DownSec = round3(r.Now().Sub(downStart).Seconds())
		if err := r.Dir.Save(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// next picks the next cell to measure: the first one of a grid not done, or
// the one a search asks for (appended), or none.
func (r *Runner) next() (int, bool) {
	x := &r.Dir.Index
	if x.Kind != "search" {
		for i, c := range x.Cells {
			if c.Status != rundir.CellDone {
				return i, true
			}
		}
		return 0, false
	}
	// A search re-runs an unfinished last probe (after --resume) first.
	if n := len(x.Cells); n > 0 && x.Cells[n-1].Status != rundir.CellDone {
		return n - 1, true
	}
	x.Judge()
	st := x.Search
	if st.Done {
		return 0, false
	}
	probe, repeat := 0, 1
	rates := map[float64]int{}
	for _, c := range x.Cells {
		if _, ok := rates[c.Rate]; !ok {
			rates[c.Rate] = len(rates) + 1
		}
		if c.Rate == st.Next {
			repeat++
		}
	}
	if p, ok := rates[st.Next]; ok {
		probe = p
	} else {
		probe = len(rates) + 1
	}
	c := rundir.SweepCell{Order: len(x.Cells) + 1, Probe: probe, Connections: x.Config.Connections[0], Rate: st.Next, Repeat: repeat, Status: rundir.CellPending}
	c.ID = cellID(c)
	x.Cells = append(x.Cells, c)
	return len(x.Cells) - 1, true
}

// cellDir creates the cell's run directory under cells/; a cell re-run
// after an interruption gets a new one, the old one is kept.
func (r *Runner) cellDir(cell *rundir.SweepCell) (*rundir.Dir, error) {
	if cell.RunDir != "" {
		cell.Notes = append(cell.Notes, "earlier attempt kept in "+cell.RunDir)
	}
	path, err := rundir.Claim(filepath.Join(r.Dir.Path, rundir.SweepCells), cell.ID, rundir.Homes, rundir.Logs, rundir.Metrics)
	if err != nil {
		return nil, fmt.Errorf("create cell directory: %w", err)
	}
	rel, _ := filepath.Rel(r.Dir.Path, path)
	cell.RunDir = rel
	return rundir.Open(path)
}

// Figures extracts what the judge needs from a cell's results. Invalid
// reasons about the load generator (lag, achieved rate, a load stopped
// early) make the cell's load invalid; the others are the run's.
func Figures(res *rundir.Results, c int, r float64) (judge.Cell, []string) {
	f := judge.Cell{
		Connections: c, Rate: r,
		Sent: res.Accounting.Sent, Committed: res.Accounting.Committed,
		Rejected: res.Accounting.Rejected, Lost: res.Accounting.Lost,
		TPS: res.TxPerSecond, P50Ms: res.Latency.P50, P95Ms: res.Latency.P95, P99Ms: res.Latency.P99,
		LoadValid: true,
	}
	for _, l := range res.Load {
		f.Offered += l.TargetRate
	}
	f.Offered = round3(f.Offered)
	gen := map[string]bool{}
	for _, why := range res.GeneratorInvalid {
		gen[why] = true
		f.LoadValid = false
		f.LoadInvalid = append(f.LoadInvalid, why)
	}
	// The testbed's reasons beyond the generator's: the cell is left out
	// of the search and the sweep's verdicts (judge.Cell.Measured).
	tb := map[string]bool{}
	for _, why := range res.TestbedBound {
		if !gen[why] {
			f.Testbed = append(f.Testbed, why)
			tb["testbed-bound: "+why] = true
		}
	}
	var runInvalid []string
	for _, why := range res.Invalid {
		if !gen[why] && !tb[why] {
			runInvalid = append(runInvalid, why)
		}
	}
	return f, runInvalid
}

// expected reads what the generator was asked to send from the cell's
// load.json (0 when it is missing).
func expected(dir string) int {
	d, err := rundir.Open(dir)
	if err != nil {
		return 0
	}
	if s, err := d.ReadLoad(); err == nil && s.Expected > 0 {
		return int(s.Expected)
	}
	return 0
}

func round3(v float64) float64 {
	return float64(int64(v*1000+0.5*sign(v))) / 1000
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}
