package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/experiment"
	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/rundir"
)

func newCompareCmd() *cobra.Command {
	var (
		up        upFlags
		lf        loadFlags
		repeats   int
		maxRep    int
		threshold float64
		failOn    string
		cooldown  time.Duration
		scrape    time.Duration
		resume    string
		equiv     bool
	)
	c := &cobra.Command{
		Use:   "compare [manifest.toml | DIR_A DIR_B [DIR_C...]]",
		Short: "Run a manifest's variants (or take finished runs) and judge them against the base",
		Long: `compare judges variants against a base, metric by metric, each with its
change in % and a 95 % bootstrap interval of it. The metrics are the node
kind's: for CometBFT committed TPS, latency avg/p50/p95/p99/max, peak
mempool, blocks/min, RSS peak and CPU per committed tx; for gossipsub MDR,
dissemination avg/p50/p95/p99/max, time to the last delivery, last-delivery
and max hop, duplicates, host CPU and RSS (invalid gossip runs are left out).
A metric regresses when it is worse by more than --threshold and the whole
interval lies beyond the threshold; an interval that straddles it is
"inconclusive" (with the repeats that would decide). Exit code 3 when a
metric of --fail-on regresses.

--equivalence asks "the same within ±threshold?" instead (two one-sided
tests): each metric is equivalent when its whole interval lies within
±threshold, not equivalent (worse or better) when it lies wholly beyond one
end, inconclusive otherwise; with a manifest, each round's two runs are a
pair (the ratio's t interval, as the QA's steady step). Exit 3 when a
metric of --fail-on is not equivalent, 4 when one is undecided.

With a manifest, every [variants.<name>] runs --repeats times, interleaved
(A B C A B C ...), each run a normal run directory with its own testnet, under
DIR/<time>-<name>-compare/runs/; the first variant (or [variants] base) is the
base. With directories, each argument is one variant: a finished run
directory, or several joined by commas (repeats of one variant; a name may
lead: name=DIR1,DIR2). Their manifests must differ only in releases, node
config, app, transport and genesis unless --force (which also lets a testnet past the
capacity estimate start); a different machine is a warning. For gossipsub
runs the keys a variant changes are [network] topology, m, degree, peers and
link conditions, [gossipsub] and [publish] rate, and --rate, --duration,
--count, --size and --warmup set [publish] (rate in msg/s network-wide).
Either way DIR/<time>-<name>-compare/ gets compare.json, compare.md and
compare.html ('benchnet report' re-renders them). --cooldown is the longest
settle between runs (as in sweep; each run has its own testnet here, so it
is spent whole). Ctrl-C keeps the finished runs and judges them; 'benchnet
compare --resume DIR' runs the rest.`,
		Example: `  benchnet compare examples/compare-releases.toml --repeats 3
  benchnet compare examples/compare-app.toml --duration 20s --fail-on tps,latency_p95
  benchnet compare examples/compare-transport.toml --equivalence --threshold 10
  benchnet compare examples/gossip-series1.toml --repeats 2 --rate 5 --scrape-interval 5s
  benchnet compare runs/20261123-101500-v038 runs/20261123-103000-quickstart
  benchnet compare old=runs/a1,runs/a2,runs/a3 new=runs/b1,runs/b2,runs/b3 --threshold 5`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fo, err := experiment.ParseFailOn(failOn)
			if err != nil {
				return usageError{err}
			}
			cfg := experiment.DefaultCompare()
			cfg.Repeats, cfg.Threshold, cfg.FailOn, cfg.MaxRepeats = repeats, threshold, fo, maxRep
			// Asked for equivalence, a manifest's variants are judged over
			// their rounds' pairs (the QA's paired decision).
			cfg.Equivalence, cfg.Paired = equiv, equiv && !dirMode(args) && resume == ""
			var cerrs []string
			for _, e := range cfg.Validate() {
				var fe *manifest.FieldError
				if errors.As(e, &fe) {
					cerrs = append(cerrs, "--"+strings.ReplaceAll(fe.Field, "_", "-")+": "+fe.Msg)
				} else {
					cerrs = append(cerrs, e.Error())
				}
			}
			if len(cerrs) > 0 {
				return usageError{errors.New(strings.Join(cerrs, "; "))}
			}
			var (
				root string
				idx  *rundir.CompareIndex
			)
			if dirMode(args) {
				vars, err := parseDirVariants(args)
				if err != nil {
					return usageError{err}
				}
				root, idx, err = experiment.CompareDirs(vars, cfg, up.output, up.force, time.Now())
				var refused *experiment.RefusedError
				if errors.As(err, &refused) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
			} else {
				env := experimentEnv(&up, scrape)
				env.Cooldown = cooldown
				var m *manifest.Manifest
				if resume != "" {
					if len(args) > 0 {
						return usageError{errors.New("--resume takes the manifest and the settings from DIR (manifest.toml, compare.json): give no manifest")}
					}
					env.Resume = resume
				} else {
					if m, err = loadManifest(cmd.Context(), args); err != nil {
						return err
					}
					if err := lf.apply(cmd, m); err != nil {
						return err
					}
					if err := up.applyRunner(m); err != nil {
						return err
					}
					if err := experiment.CheckFailOn(m.Kind(), cfg.FailOn); err != nil {
						return usageError{err}
					}
					if !m.HasVariants() {
						return usageError{fmt.Errorf("%s has no [variants.<name>] tables: add two or more, or compare finished run directories", m.File)}
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
				res, runErr := x.Run(cmd.Context())
				if res.Dir == "" {
					return runErr
				}
				root = res.Dir
				if idx, err = experiment.ReadCompareIndex(root); err != nil {
					return errors.Join(runErr, err)
				}
				if runErr != nil {
					defer func() { fmt.Fprintf(os.Stderr, "compare: %v\n", runErr) }()
				}
			}
			files, rerr := report.RenderDir(root, "")
			fmt.Fprint(cmd.OutOrStdout(), report.CompareVerdictText(idx))
			printOutcome(cmd, root, files)
			finishDir(cmd, root)
			if rerr != nil {
				return rerr
			}
			if err := experiment.CompareResult(root, idx).Err(); err != nil {
				return err
			}
			if !idx.Complete {
				return fmt.Errorf("the comparison did not finish: its verdicts cover the runs it has ('benchnet compare --resume %s' runs the rest)", root)
			}
			return nil
		},
	}
	up.register(c)
	addHistoryFlags(c)
	lf.register(c.Flags())
	c.Flags().IntVar(&repeats, "repeats", 3, "runs per variant (with a manifest)")
	c.Flags().IntVar(&maxRep, "max-repeats", 0, "adaptive repeats (with a manifest): while a --fail-on metric is inconclusive, run another round, up to this many per variant (0: off)")
	c.Flags().Float64Var(&threshold, "threshold", judge.DefaultThreshold, "regression threshold in % (with --equivalence: the margin, ±)")
	c.Flags().BoolVar(&equiv, "equivalence", false, "ask \"equivalent within ±threshold?\" (two one-sided tests, paired rounds) instead of \"regressed?\"")
	c.Flags().StringVar(&failOn, "fail-on", "all", "metrics whose regression fails the comparison (exit 3), comma-separated: "+strings.Join(experiment.AllMetricKeys(), ", "))
	c.Flags().DurationVar(&cooldown, "cooldown", 5*time.Second, "longest settle between runs (each run has its own testnet: no loaded chain is left to watch, so the settle is spent whole)")
	c.Flags().StringVar(&resume, "resume", "", "finish an interrupted compare directory: run its runs not done, then judge them all")
	c.Flags().DurationVar(&scrape, "scrape-interval", time.Second, "Prometheus and process-stats sampling interval")
	return c
}

// dirMode: two or more arguments, or any that is a directory.
func dirMode(args []string) bool {
	if len(args) >= 2 {
		return true
	}
	for _, a := range args {
		_, p, _ := strings.Cut(a, "=")
		if p == "" {
			p = a
		}
		first, _, _ := strings.Cut(p, ",")
		if st, err := os.Stat(first); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// parseDirVariants reads "[name=]DIR[,DIR...]" arguments.
func parseDirVariants(args []string) ([]experiment.DirVariant, error) {
	var out []experiment.DirVariant
	for _, a := range args {
		name, list, ok := strings.Cut(a, "=")
		if !ok {
			name, list = "", a
		}
		var dirs []string
		for _, d := range strings.Split(list, ",") {
			if d == "" {
				continue
			}
			st, err := os.Stat(d)
			if err != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s: not a directory", d)
			}
			if _, err := os.Stat(filepath.Join(d, rundir.ResultsFile)); err != nil {
				return nil, fmt.Errorf("%s: no %s: not a finished run directory", d, rundir.ResultsFile)
			}
			dirs = append(dirs, d)
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("%q names no run directory", a)
		}
		if name == "" {
			name = variantLabel(dirs[0])
		}
		out = append(out, experiment.DirVariant{Name: name, Dirs: dirs})
	}
	if len(out) < 2 {
		return nil, errors.New("compare needs two or more run directories (variants)")
	}
	return out, nil
}

// variantLabel names a run directory's variant: the variant its manifest
// was made from, else the directory's name without its timestamp.
func variantLabel(dir string) string {
	if data, err := os.ReadFile(filepath.Join(dir, rundir.Manifest)); err == nil {
		if first, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(first, "# variant \"") {
			v := strings.TrimPrefix(first, "# variant \"")
			if i := strings.Index(v, "\""); i > 0 {
				return v[:i]
			}
		}
	}
	base := filepath.Base(filepath.Clean(dir))
	parts := strings.SplitN(base, "-", 3)
	if len(parts) == 3 && len(parts[0]) == 8 {
		return parts[2]
	}
	return base
}
