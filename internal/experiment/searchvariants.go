package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Variant is one build's saturation search in SearchVariants: its own
// search directory (an index of kind "search", made by Create and
// NewIndex), the manifest's load, and how to bring its testnet up.
type Variant struct {
	Name string
	Dir  *Dir
	Base manifest.Load
	Open Opener
}

// VariantResult is one variant's search when SearchVariants returns.
type VariantResult struct {
	Name  string            `json:"name"`
	Dir   string            `json:"dir"`
	State judge.SearchState `json:"search"`
	// Interval is where the search places the saturation rate (tx/s per
	// connection); Bracketed is false when no probe was decided.
	Interval  judge.SaturationInterval `json:"interval"`
	Bracketed bool                     `json:"bracketed"`
	// Err is why this variant's search stopped early ("" when it did not):
	// the other variants' searches went on.
	Err string `json:"error,omitempty"`
}

// InterleaveOrder is the order in which round k (0-based) gives n variants
// their next run: 0..n-1 in even rounds, reversed in odd ones (ABBA), so a
// drift of the machine over time weighs on every variant alike and no
// variant always runs right after the same other one.
func InterleaveOrder(round, n int) []int {
	out := make([]int, n)
	for i := range out {
		if round%2 == 0 {
			out[i] = i
		} else {
			out[i] = n - 1 - i
		}
	}
	return out
}

// SearchVariants runs several builds' saturation searches with their runs
// interleaved: in each round every variant whose search is not done
// measures its next run (a new probe or a repeat), in InterleaveOrder, so
// two builds are compared on the same machine state rather than an hour
// apart. Every run gets a fresh testnet, torn down before the next variant's
// (isolated probes: no run inherits another's backlog, and only one testnet
// is up at a time). Each variant's directory is saved after every run and
// completed when its search is done; an interrupted call resumes by being
// called again with the same directories. Compare two results with
// judge.CompareSaturation(base.Interval, cand.Interval, margin). A variant
// whose testnet does not come up is tried once more; a variant whose run
// fails again, or fails otherwise (not an interrupt), stops its own search with its Err set;
// the others go on, and the error returned joins those of the variants.
func SearchVariants(ctx context.Context, variants []Variant, log io.Writer) (out []VariantResult, err error) {
	if log == nil {
		log = io.Discard
	}
	if len(variants) == 0 {
		return nil, errors.New("search variants: no variant")
	}
	runners := make([]*Runner, len(variants))
	seen := map[string]bool{}
	for i, v := range variants {
		switch {
		case v.Dir == nil || v.Open == nil:
			return nil, fmt.Errorf("search variants: variant %q: no directory or opener", v.Name)
		case v.Dir.Index.Kind != "search":
			return nil, fmt.Errorf("search variants: variant %q: %s is a %s, not a search", v.Name, v.Dir.Path, v.Dir.Index.Kind)
		case seen[v.Name]:
			return nil, fmt.Errorf("search variants: variant %q given twice", v.Name)
		}
		seen[v.Name] = true
		v.Dir.Index.Config.Fresh = true // recorded: every run had its own testnet
		runners[i] = &Runner{Dir: v.Dir, Base: v.Base, Open: v.Open, Log: log, closeAfter: true}
	}
	defer func() {
		for _, r := range runners {
			err = errors.Join(err, r.closeEnv(ctx))
		}
	}()
	done := make([]bool, len(variants))
	errs := make([]error, len(variants))
	retried := make([]bool, len(variants)) // the last run failed to come up once
	for round := 0; ; round++ {
		active := 0
		for _, i := range InterleaveOrder(round, len(variants)) {
			if done[i] {
				continue
			}
			fmt.Fprintf(log, "\n== round %d: %s\n", round+1, variants[i].Name)
			more, err := runners[i].step(ctx)
			if err != nil && ctx.Err() != nil {
				return results(variants, errs), fmt.Errorf("%s: %w", variants[i].Name, err)
			}
			var up *upError
			if err != nil && errors.As(err, &up) && !retried[i] {
				// A testnet that does not come up once may be the
				// machine's moment (a neighbour's burst): nothing was
				// measured, so the same run is tried once more next round.
				retried[i] = true
				fmt.Fprintf(log, "search %s: %v: trying this run once more\n", variants[i].Name, err)
				active++
				continue
			}
			if err != nil {
				// One build that cannot run (a candidate whose nodes do not
				// come up twice in a row) ends its own search, not the
				// others'.
				errs[i], done[i] = fmt.Errorf("%s: %w", variants[i].Name, err), true
				fmt.Fprintf(log, "search %s stopped: %v\n", variants[i].Name, err)
				continue
			}
			retried[i] = false
			if !more {
				done[i] = true
				if err := runners[i].finish(); err != nil {
					return results(variants, errs), err
				}
				continue
			}
			active++
		}
		if active == 0 {
			return results(variants, errs), errors.Join(errs...)
		}
	}
}

func results(variants []Variant, errs []error) []VariantResult {
	out := make([]VariantResult, len(variants))
	for i, v := range variants {
		x := &v.Dir.Index
		x.Judge()
		out[i] = VariantResult{Name: v.Name, Dir: v.Dir.Path}
		if errs[i] != nil {
			out[i].Err = errs[i].Error()
		}
		if x.Search != nil {
			out[i].State = *x.Search
			out[i].Interval, out[i].Bracketed = judge.IntervalOf(*x.Search)
		}
	}
	return out
}

// Build is one build to search in SearchBuilds: a name (a directory name:
// "baseline", "candidate") and the manifest of its testnet.
type Build struct {
	Name     string
	Manifest *manifest.Manifest
}

// SearchBuilds is SearchVariants in the executor's shape (qa's step 1): the
// builds' searches with cfg, their runs interleaved, each in its own search
// directory <dir>/<name> (a sweep directory of kind "search" that `benchnet
// report` renders), where dir is env.Dir (a parent's step), a new
// <timestamp>-<name>-search-builds under env.Output, or env.Resume (finish
// an interrupted call: the same builds, settings read from their
// directories). Judge two results with judge.CompareSaturation.
func SearchBuilds(ctx context.Context, env Env, cfg Sweep, builds []Build) ([]VariantResult, error) {
	if env.Lab == nil {
		return nil, errors.New("search builds: no lab to measure with")
	}
	if len(builds) == 0 {
		return nil, errors.New("search builds: no build")
	}
	cfg.Search, cfg.Fresh, cfg.Rates = true, true, nil
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, &UsageError{errors.Join(errs...)}
	}
	for _, b := range builds {
		if b.Manifest == nil {
			return nil, &UsageError{fmt.Errorf("search builds: build %q has no manifest", b.Name)}
		}
		if err := cfg.CheckLoads(b.Manifest); err != nil {
			return nil, err
		}
	}
	root := env.Resume
	if root == "" {
		var err error
		if root, err = env.claim(builds[0].Manifest.Name + "-search-builds"); err != nil {
			return nil, fmt.Errorf("search builds: %w", err)
		}
	}
	variants := make([]Variant, len(builds))
	for i, b := range builds {
		var d *Dir
		path := filepath.Join(root, b.Name)
		if env.Resume != "" {
			var err error
			if d, err = Open(path); err != nil {
				return nil, &UsageError{fmt.Errorf("resume %s: %w", b.Name, err)}
			}
		} else {
			p, err := rundir.Claim(root, b.Name, rundir.SweepCells, rundir.SweepNets)
			if err != nil {
				return nil, err
			}
			d = &Dir{Path: p, Index: NewIndex(b.Manifest.Name, b.Manifest.Seed, cfg, env.now())}
			if err := errors.Join(os.WriteFile(filepath.Join(p, rundir.Manifest), b.Manifest.Raw, 0o644), d.Save()); err != nil {
				return nil, err
			}
		}
		m, nets := b.Manifest, filepath.Join(d.Path, rundir.SweepNets)
		variants[i] = Variant{Name: b.Name, Dir: d, Base: m.Load,
			Open: func(ctx context.Context) (Testnet, error) { return env.Lab.Open(ctx, m, nets) }}
	}
	res, err := SearchVariants(ctx, variants, env.log())
	return res, interrupted(ctx, err)
}
