package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/experiment/live"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
)

// sweepFlags override the manifest's [sweep] table field by field.
type sweepFlags struct {
	s         experiment.Sweep
	precision string
	// fields maps a flag to its [sweep] field, for error messages.
	fields map[string]string
}

func (f *sweepFlags) register(fs *pflag.FlagSet) {
	f.fields = map[string]string{}
	add := func(flag, field string) { f.fields[flag] = field }
	fs.IntSliceVarP(&f.s.Connections, "connections", "c", nil, "connection counts of the grid (c), e.g. 1,2,4")
	add("connections", "connections")
	fs.Float64SliceVar(&f.s.Rates, "rates", nil, "rates of the grid in tx/s per connection (r), e.g. 100,200,400,800")
	add("rates", "rates")
	fs.DurationVar(&f.s.Duration.Duration, "duration", 0, "load duration of each cell (default 30s)")
	add("duration", "duration")
	fs.IntVar(&f.s.Repeats, "repeats", 0, "repeats of the whole grid, interleaved (default 1)")
	add("repeats", "repeats")
	fs.BoolVar(&f.s.Fresh, "fresh", false, "restart the testnet for every cell")
	add("fresh", "fresh")
	fs.DurationVar(&f.s.Cooldown.Duration, "cooldown", 0, "longest wait between cells for empty mempools and two blocks (default 1m)")
	add("cooldown", "cooldown")
	fs.Float64Var(&f.s.MinCommitted, "min-committed", 0, "saturation rule: a cell is saturated below this fraction of sent committed (default 0.99)")
	add("min-committed", "min_committed")
	fs.Float64Var(&f.s.LatencyFactor, "latency-factor", 0, "saturation rule: ... or when its p50 latency exceeds this many times the lightest load's (default 3)")
	add("latency-factor", "latency_factor")
	fs.BoolVar(&f.s.Search, "search", false, "search the saturation rate (ramp, then bisection) instead of a grid")
	add("search", "search")
	fs.Float64Var(&f.s.StartRate, "start-rate", 0, "search: first rate probed, tx/s per connection (default 100)")
	add("start-rate", "start_rate")
	fs.Float64Var(&f.s.MinRate, "min-rate", 0, "search: lowest rate probed (default 10)")
	add("min-rate", "min_rate")
	fs.Float64Var(&f.s.MaxRate, "max-rate", 0, "search: highest rate probed (default 2000)")
	add("max-rate", "max_rate")
	fs.StringVar(&f.precision, "precision", "", "search: stop when the bracket is narrower than this, e.g. 5% (default 5%)")
	add("precision", "precision")
	fs.IntVar(&f.s.MinRepeats, "min-repeats", 0, "search: repeats of a probe before it may decide (default 2)")
	add("min-repeats", "min_repeats")
	fs.IntVar(&f.s.MaxRepeats, "max-repeats", 0, "search: repeats of a probe before it is undecided (default 5)")
	add("max-repeats", "max_repeats")
	fs.IntVar(&f.s.Budget, "budget", 0, "search: measured runs in all (default 30)")
	add("budget", "budget")
}

// apply copies the flags the user set over cfg and validates the result;
// an error caused by a flag names the flag.
func (f *sweepFlags) apply(cmd *cobra.Command, cfg *experiment.Sweep, m *manifest.Manifest) error {
	set := map[string]bool{}
	cmd.Flags().Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	if set["precision"] {
		p, err := parseFraction(f.precision)
		if err != nil {
			return usageError{fmt.Errorf("invalid flag --precision: %w", err)}
		}
		cfg.Precision = p
	}
	copyIf := func(name string, apply func()) {
		if set[name] {
			apply()
		}
	}
	copyIf("connections", func() { cfg.Connections = f.s.Connections })
	copyIf("rates", func() { cfg.Rates = f.s.Rates })
	copyIf("duration", func() { cfg.Duration = f.s.Duration })
	copyIf("repeats", func() { cfg.Repeats = f.s.Repeats })
	copyIf("fresh", func() { cfg.Fresh = f.s.Fresh })
	copyIf("cooldown", func() { cfg.Cooldown = f.s.Cooldown })
	copyIf("min-committed", func() { cfg.MinCommitted = f.s.MinCommitted })
	copyIf("latency-factor", func() { cfg.LatencyFactor = f.s.LatencyFactor })
	copyIf("search", func() { cfg.Search = f.s.Search })
	copyIf("start-rate", func() { cfg.StartRate = f.s.StartRate })
	copyIf("min-rate", func() { cfg.MinRate = f.s.MinRate })
	copyIf("max-rate", func() { cfg.MaxRate = f.s.MaxRate })
	copyIf("min-repeats", func() { cfg.MinRepeats = f.s.MinRepeats })
	copyIf("max-repeats", func() { cfg.MaxRepeats = f.s.MaxRepeats })
	copyIf("budget", func() { cfg.Budget = f.s.Budget })
	if _, inTable := m.Sweep["rates"]; cfg.Search && !set["rates"] && !inTable {
		cfg.Rates = nil // a search picks its own rates; the grid default does not apply
	}
	errs := cfg.Validate()
	if len(errs) == 0 {
		return nil
	}
	byField := map[string]string{}
	for flag, field := range f.fields {
		if set[flag] {
			byField[field] = flag
		}
	}
	var fromFlags []string
	var fromTable manifest.Errors
	for _, e := range errs {
		var fe *manifest.FieldError
		switch {
		case !errors.As(e, &fe):
			fromTable = append(fromTable, m.Errorf("sweep", "%v", e))
		case byField[fe.Field] != "":
			fromFlags = append(fromFlags, "--"+byField[fe.Field]+": "+fe.Msg)
		case m.Sweep[fe.Field] != nil:
			fromTable = append(fromTable, m.Errorf("sweep."+fe.Field, "%s", fe.Msg))
		default:
			// A default that conflicts with what was set: name its flag.
			flag := fe.Field
			for fl, field := range f.fields {
				if field == fe.Field {
					flag = fl
				}
			}
			fromFlags = append(fromFlags, fmt.Sprintf("--%s (default): %s", flag, fe.Msg))
		}
	}
	var out []error
	if len(fromFlags) > 0 {
		out = append(out, fmt.Errorf("invalid flag %s", strings.Join(fromFlags, "; ")))
	}
	if len(fromTable) > 0 {
		out = append(out, fromTable)
	}
	return usageError{errors.Join(out...)}
}

// parseFraction reads "5%" or "0.05".
func parseFraction(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want a fraction (0.05) or a percentage (5%%)", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

func newSweepCmd() *cobra.Command {
	var (
		sf       sweepFlags
		up       upFlags
		resume   string
		rerender string
		scrape   time.Duration
	)
	c := &cobra.Command{
		Use:   "sweep [manifest.toml]",
		Short: "Measure a c x r grid of loads (or search the saturation rate) and find the saturation point",
		Long: `sweep brings one testnet up and measures every cell of a grid of loads on it:
c connections x r tx/s per connection, each for --duration, in an order
randomised from the manifest's seed (repeats interleaved), with a cool-down
between cells until every mempool is empty and two blocks have passed. Each
cell is an ordinary run directory (the same measurement as 'benchnet load')
under DIR/<id>-sweep/cells/; sweep.json indexes them and sweep.md/sweep.html
show the saturation table, throughput and latency against the offered load,
and the saturation point, by a rule stated in the report:

  a cell is saturated when committed < 99 % of sent, or its p50 latency > 3 x
  the lightest load's; it is invalid (not saturated) when the load generator
  missed its schedule. Per c, the sustainable rate is the highest r below the
  first saturated or invalid one; the saturation point is the sustainable
  point with the highest offered load.

--search finds the highest sustainable rate at one connection count without a
grid: a doubling ramp to bracket it, then bisection, each probe repeated until
the 95 % confidence interval of committed/sent decides its side of the rule.

Settings come from the manifest's [sweep] table, overridden by flags. Ctrl-C
keeps every finished cell; 'benchnet sweep --resume DIR' finishes the rest.`,
		Example: `  benchnet sweep --connections 1,2,4 --rates 100,200,400,800 --duration 30s
  benchnet sweep examples/sweep-qa.toml --repeats 3 --output scratch-runs
  benchnet sweep --search --connections 1 --max-rate 2000 --precision 5%
  benchnet sweep --resume runs/20261123-170000-quickstart-sweep
  benchnet sweep --report runs/20261123-170000-quickstart-sweep`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rerender != "" {
				return renderSweep(cmd, rerender)
			}
			var (
				d   *experiment.Dir
				m   *manifest.Manifest
				err error
			)
			if resume != "" {
				if len(args) > 0 || cmd.Flags().NFlag() > countSet(cmd, "resume", "output", "ready-timeout", "scrape-interval") {
					return usageError{errors.New("--resume takes the manifest and the settings from DIR (manifest.toml, sweep.json): give no manifest and no sweep flags")}
				}
				if d, err = experiment.Open(resume); err != nil {
					return usageError{err}
				}
				if m, err = manifest.LoadFile(filepath.Join(d.Path, "manifest.toml")); err != nil {
					return fmt.Errorf("manifest of %s: %w", d.Path, err)
				}
				if d.Index.Complete {
					fmt.Fprintf(os.Stderr, "%s is complete: re-rendering its report\n", d.Path)
					return renderSweep(cmd, d.Path)
				}
			} else {
				if m, err = loadManifest(args); err != nil {
					return err
				}
				cfg, err := experiment.SweepFromManifest(m)
				if err != nil {
					return err
				}
				if err := sf.apply(cmd, cfg, m); err != nil {
					return err
				}
				if err := checkCellLoads(m, cfg); err != nil {
					return err
				}
				if err := needRoot(); err != nil {
					return err
				}
				if d, err = experiment.Create(up.output, m.Name, time.Now()); err != nil {
					return err
				}
				d.Index = experiment.NewIndex(m.Name, m.Seed, *cfg, time.Now())
				if err := errors.Join(os.WriteFile(filepath.Join(d.Path, "manifest.toml"), m.Raw, 0o644), d.Save()); err != nil {
					return err
				}
			}
			if err := needRoot(); err != nil {
				return err
			}
			if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "sweep %s: %s\n", d.Path, describeSweep(&d.Index))
			lv := &live.Live{Manifest: m, Up: up.options(), Scrape: scrape, Log: os.Stderr, Progress: os.Stderr}
			r := &experiment.Runner{Dir: d, Base: m.Load, Open: lv.Opener(d), Log: os.Stderr}
			runErr := r.Run(cmd.Context())
			files, rerr := report.RenderSweep(d.Path)
			fmt.Fprintln(os.Stderr)
			fmt.Fprint(os.Stderr, report.SweepSummary(&d.Index))
			fmt.Fprintf(cmd.OutOrStdout(), "sweep directory: %s\n", d.Path)
			for _, f := range files {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", f)
			}
			if runErr != nil && !d.Index.Complete {
				fmt.Fprintf(os.Stderr, "sweep not finished: 'benchnet sweep --resume %s' measures the remaining cells\n", d.Path)
			}
			return errors.Join(runErr, rerr)
		},
	}
	sf.register(c.Flags())
	up.register(c)
	c.Flags().StringVar(&resume, "resume", "", "finish the unfinished cells of an interrupted sweep directory")
	c.Flags().StringVar(&rerender, "report", "", "only re-render sweep.md and sweep.html of a sweep directory")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval of every cell")
	return c
}

// countSet counts which of names the user set.
func countSet(cmd *cobra.Command, names ...string) int {
	n := 0
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			n++
		}
	}
	return n
}

// checkCellLoads refuses a cell whose load the manifest's rules reject
// (before anything starts), naming the cell.
func checkCellLoads(m *manifest.Manifest, cfg *experiment.Sweep) error {
	rates := cfg.Rates
	if cfg.Search {
		rates = []float64{cfg.MinRate, cfg.MaxRate}
	}
	orig := m.Load
	defer func() { m.Load = orig }()
	for _, c := range cfg.Connections {
		for _, r := range rates {
			m.Load = cfg.CellLoad(orig, c, r)
			if errs := m.Validate(); len(errs) > 0 {
				return usageError{fmt.Errorf("cell c=%d r=%g: %w", c, r, errs)}
			}
		}
	}
	return nil
}

func describeSweep(x *experiment.Index) string {
	c := x.Config
	if x.Kind == "search" {
		return fmt.Sprintf("search at c=%d from %g tx/s (max %g), %s per probe, precision %g %%", c.Connections[0], c.StartRate, c.MaxRate, c.Duration, c.Precision*100)
	}
	return fmt.Sprintf("%d cells (c %v x r %v x %d repeat(s)), %s each, order from seed %d", len(x.Cells), c.Connections, c.Rates, c.Repeats, c.Duration, x.Seed)
}

func renderSweep(cmd *cobra.Command, dir string) error {
	files, err := report.RenderSweep(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(cmd.OutOrStdout(), f)
	}
	return nil
}
