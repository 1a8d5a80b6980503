package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

// sweepFlags override the manifest's [sweep] table field by field. The
// load flags (-c/--connections, --rate, --duration and the rest, shared
// with run, load, soak and compare) are lf: --connections N is a grid of one
// connection count (--connections-list 1,2,4 spans several), --rate R a
// grid of one rate (--rates spans several), --duration each cell's load;
// the others set the manifest's load the cells start from.
type sweepFlags struct {
	s         experiment.Sweep
	lf        loadFlags
	precision string
	durations []time.Duration
	// fields maps a flag to its [sweep] field, for error messages;
	// primary a field to the flag named when its default is wrong.
	fields  map[string]string
	primary map[string]string
}

// cellShapeFlags are load flags a sweep cell cannot take: each cell is a
// constant load over --duration.
var cellShapeFlags = []string{"count", "shape", "ramp-from"}

func (f *sweepFlags) register(fs *pflag.FlagSet) {
	f.fields, f.primary = map[string]string{}, map[string]string{}
	add := func(flag, field string) {
		f.fields[flag] = field
		if _, ok := f.primary[field]; !ok {
			f.primary[field] = flag
		}
	}
	f.lf.register(fs)
	fs.Lookup("connections").Usage = "one connection count for the grid or the search (several: --connections-list)"
	fs.Lookup("rate").Usage = "one rate of the grid, tx/s per connection (several: --rates)"
	fs.Lookup("duration").Usage = "load duration of each cell (default 30s)"
	for _, name := range cellShapeFlags {
		fs.Lookup(name).Usage = "refused: a sweep's cells are constant loads over --duration"
	}
	fs.IntSliceVar(&f.s.Connections, "connections-list", nil, "connection counts of the grid (c), e.g. 1,2,4 (one: -c/--connections)")
	add("connections-list", "connections")
	add("connections", "connections")
	fs.Float64SliceVar(&f.s.Rates, "rates", nil, "rates of the grid in tx/s per connection (r), e.g. 100,200,400,800 (one: --rate)")
	add("rates", "rates")
	add("rate", "rates")
	add("duration", "duration")
	fs.DurationSliceVar(&f.durations, "durations", nil, "several load durations: the grid runs at each (tx/s against duration), e.g. 10s,30s,60s")
	add("durations", "durations")
	fs.IntVar(&f.s.Repeats, "repeats", 0, "repeats of the whole grid, interleaved (default 1)")
	add("repeats", "repeats")
	fs.BoolVar(&f.s.Fresh, "fresh", false, "restart the testnet for every cell (a search does by default: --fresh=false reuses one testnet with a settle)")
	add("fresh", "fresh")
	fs.DurationVar(&f.s.Cooldown.Duration, "cooldown", 0, "longest settle between cells: until every mempool is empty and the chain is back at its unloaded pace (default 1m)")
	add("cooldown", "cooldown")
	fs.Float64Var(&f.s.MinCommitted, "min-committed", 0, "saturation rule: a cell is saturated below this fraction of sent committed (default 0.99)")
	add("min-committed", "min_committed")
	fs.Float64Var(&f.s.LatencyFactor, "latency-factor", 0, "saturation rule: ... or when its p50 latency exceeds this many times the lightest load's (default 3)")
	add("latency-factor", "latency_factor")
	fs.BoolVar(&f.s.Search, "search", false, "search the saturation rate (ramp, then bisection) instead of a grid")
	add("search", "search")
	fs.Float64Var(&f.s.StartRate, "start-rate", 0, "search: first rate probed, tx/s per connection, the latency rule's baseline (default 200)")
	add("start-rate", "start_rate")
	fs.Float64Var(&f.s.MinRate, "min-rate", 0, "search: lowest rate probed (default 10)")
	add("min-rate", "min_rate")
	fs.Float64Var(&f.s.MaxRate, "max-rate", 0, "search: highest rate probed (default 2000)")
	add("max-rate", "max_rate")
	fs.StringVar(&f.precision, "precision", "", "search: stop when the bracket is narrower than this, e.g. 5% (default 5%)")
	add("precision", "precision")
	fs.IntVar(&f.s.MinRepeats, "min-repeats", 0, "search: repeats of a probe near the threshold before it may decide (default 2)")
	add("min-repeats", "min_repeats")
	fs.IntVar(&f.s.MaxRepeats, "max-repeats", 0, "search: repeats of a probe before it is placed by its mean (default 3)")
	add("max-repeats", "max_repeats")
	fs.IntVar(&f.s.Budget, "budget", 0, "search: measured runs in all (default 20)")
	add("budget", "budget")
	fs.Float64Var(&f.s.Growth, "growth", 0, "search: factor of the ramp up (and down) before a bracket (default 4)")
	add("growth", "growth")
	fs.Float64Var(&f.s.ClearMargin, "clear-margin", 0, "search: one run decides a probe this far beyond the committed threshold (0: always min-repeats; default 0.05)")
	add("clear-margin", "clear_margin")
}

// apply copies the flags the user set over cfg and validates the result;
// an error caused by a flag names the flag.
func (f *sweepFlags) apply(cmd *cobra.Command, cfg *experiment.Sweep, m *manifest.Manifest) error {
	set := map[string]bool{}
	cmd.Flags().Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	for _, name := range cellShapeFlags {
		if set[name] {
			return usageError{fmt.Errorf("--%s: a sweep's cells are constant loads over --duration", name)}
		}
	}
	if set["connections"] && set["connections-list"] {
		return usageError{errors.New("--connections and --connections-list: give one")}
	}
	if set["rate"] && set["rates"] {
		return usageError{errors.New("--rate and --rates: give one")}
	}
	// The other load flags set the load every cell starts from.
	if err := f.lf.apply(cmd, m); err != nil {
		return err
	}
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
	copyIf("connections-list", func() { cfg.Connections = f.s.Connections })
	copyIf("connections", func() { cfg.Connections = []int{f.lf.l.Connections} })
	copyIf("rates", func() { cfg.Rates = f.s.Rates })
	copyIf("rate", func() { cfg.Rates = []float64{f.lf.l.Rate} })
	copyIf("duration", func() { cfg.Duration = f.lf.l.Duration })
	copyIf("durations", func() {
		cfg.Durations = nil
		for _, d := range f.durations {
			cfg.Durations = append(cfg.Durations, rundir.Duration{Duration: d})
		}
	})
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
	copyIf("growth", func() { cfg.Growth = f.s.Growth })
	copyIf("clear-margin", func() { cfg.ClearMargin = f.s.ClearMargin })
	if _, inTable := m.Sweep["fresh"]; cfg.Search && !set["fresh"] && !inTable {
		// A search isolates its probes: a run right after an overloaded one
		// lost 0-7 % where a fresh testnet lost nothing (docs/NOTES.md).
		cfg.Fresh = true
	}
	if _, inTable := m.Sweep["rates"]; cfg.Search && !set["rates"] && !set["rate"] && !inTable {
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
			if fl, ok := f.primary[fe.Field]; ok {
				flag = fl
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
randomised from the manifest's seed (repeats interleaved), with a settle
between cells until every mempool is empty and two blocks have passed (at
most --cooldown). Each
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
grid: a x4 ramp from a light first probe, a probe just below the rate the first
saturated probe committed, then geometric bisection. One run decides a probe
far from the threshold; near it, probes are repeated until the 95 %
confidence interval of committed/sent (and p50) decides its side of the rule.
Each probe runs on a fresh testnet (--fresh=false: one testnet, settles).
A manifest with [variants] searches every variant, their runs interleaved
(ABBA), one directory each, and judges each against the baseline's interval
at the precision (regression, improvement, same or inconclusive).

A grid on a manifest with [variants] is one experiment over every variant:
each cell runs on its variant's testnet (one testnet up at a time), the
variants' cells shuffled together, each variant judged on its own cells;
the report plots committed tx/s against rate (and against duration,
[sweep] durations, and connections where the grid varies them), one line
per variant (tm-bench's four colours: examples/sweep-app.toml).

Settings come from the manifest's [sweep] table, overridden by flags. The
load flags of 'benchnet run' set the load every cell starts from; -c and
--rate give a grid of one connection count or rate (--connections-list and
--rates give several); --count, --shape and --ramp-from are refused (cells
are constant loads over --duration). Ctrl-C keeps every finished cell;
'benchnet sweep --resume DIR' finishes the rest; 'benchnet report DIR'
re-renders sweep.md and sweep.html.`,
		Example: `  benchnet sweep --connections-list 1,2,4 --rates 100,200,400,800 --duration 30s
  benchnet sweep examples/sweep-qa.toml --repeats 3 --output scratch-runs --size 512
  benchnet sweep --search -c 1 --max-rate 2000 --precision 5%
  benchnet sweep --resume runs/20261123-170000-quickstart-sweep
  benchnet report runs/20261123-170000-quickstart-sweep`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rerender != "" {
				return renderSweep(cmd, rerender)
			}
			env := experimentEnv(&up, scrape)
			var (
				m   *manifest.Manifest
				cfg = experiment.DefaultSweep()
				err error
			)
			if resume != "" {
				if len(args) > 0 || cmd.Flags().NFlag() > countSet(cmd, "resume", "output", "ready-timeout", "scrape-interval") {
					return usageError{errors.New("--resume takes the manifest and the settings from DIR (manifest.toml, sweep.json): give no manifest and no sweep flags")}
				}
				d, err := experiment.Open(resume)
				if err != nil {
					return usageError{err}
				}
				if d.Index.Complete {
					fmt.Fprintf(os.Stderr, "%s is complete: re-rendering its report\n", d.Path)
					return renderSweep(cmd, d.Path)
				}
				env.Resume = d.Path
			} else {
				if m, err = loadManifest(cmd.Context(), args); err != nil {
					return err
				}
				if err := up.applyRunner(m); err != nil {
					return err
				}
				if cfg, err = experiment.SweepFromManifest(m); err != nil {
					return err
				}
				if err := sf.apply(cmd, cfg, m); err != nil {
					return err
				}
				if cfg.Search && m.HasVariants() {
					return searchVariants(cmd, m, cfg, env)
				}
			}
			x, err := cfg.NewExecutor(m, env)
			if err != nil {
				return usage(err)
			}
			if err := needRoot(); err != nil {
				return err
			}
			if err := deps.Ensure(cmd.Context(), os.Stderr, runCommands()...); err != nil {
				return err
			}
			res, err := runExperiment(cmd, x)
			if res.Dir != "" {
				if idx, rerr := rundir.SweepRecord.Read(res.Dir); rerr == nil {
					fmt.Fprintln(os.Stderr)
					fmt.Fprint(os.Stderr, report.SweepSummary(idx))
				}
				if !res.Complete {
					fmt.Fprintf(os.Stderr, "sweep not finished: 'benchnet sweep --resume %s' measures the remaining cells\n", res.Dir)
				}
			}
			return err
		},
	}
	sf.register(c.Flags())
	up.register(c)
	addHistoryFlags(c)
	c.Flags().StringVar(&resume, "resume", "", "finish the unfinished cells of an interrupted sweep directory")
	c.Flags().StringVar(&rerender, "report", "", "only re-render sweep.md and sweep.html of a sweep directory (alias of 'benchnet report DIR')")
	_ = c.Flags().MarkHidden("report")
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
