package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func init() {
	Register("qa", func() Config { return DefaultQA() })
}

// QA is the configuration of `benchnet qa`: the release QA method's steps
// and every rule and threshold they judge with. It is the [qa] table of a
// QA manifest, over these defaults (or QuickQA's with --quick).
type QA rundir.QAConfig

// DefaultQA is the full QA on this machine (about an hour).
func DefaultQA() *QA {
	return &QA{
		Connections: 1, ProbeDuration: dur(30 * time.Second), StartRate: 200, MaxRate: 3000, Precision: 0.05,
		ProbeRepeats: 2, ProbeMax: 3, SearchBudget: 20, Margin: 0.5, SaturationThreshold: 10,
		MinPairs: 3, MaxPairs: 14, Overload: 1.2, PairDuration: dur(30 * time.Second), PairOrder: rundir.PairOrderABAB,
		Duration: dur(60 * time.Second), Repeats: 3, MaxRepeats: 8, Threshold: judge.DefaultThreshold,
		FailOn: []string{"tps", "latency_avg", "latency_p95", "blocks_per_min"},
		LE:     true, LERepeats: 2,
		Rotate: "qa-rotate.toml", Cycles: 10, RotateDuration: dur(150 * time.Second), CatchUpThreshold: 50, CatchUpFloor: dur(5 * time.Second),
	}
}

// QuickQA is --quick over the defaults.
func QuickQA() *QA {
	q := DefaultQA()
	q.Quick()
	return q
}

// Quick turns q into the short profile: the same steps with fewer and
// shorter runs and a coarser search, for smoke tests and CI (under 15
// minutes here). A manifest's [qa] table applies over it.
func (q *QA) Quick() {
	q.ProbeDuration, q.Precision, q.ProbeRepeats, q.ProbeMax, q.SearchBudget = dur(10*time.Second), 0.25, 1, 2, 6
	q.MinPairs, q.MaxPairs, q.PairDuration = 3, 6, dur(20*time.Second)
	// Latency emulation is reported, not judged, unless judge_le: the
	// quick profile leaves it out for the pairs' time (a manifest's [qa]
	// latency_emulation = true brings it back).
	q.LE = false
	q.Duration, q.Repeats, q.MaxRepeats = dur(20*time.Second), 3, 4 // a paired verdict needs 3 rounds
	q.LERepeats = 1
	q.Cycles, q.RotateDuration = 3, dur(40*time.Second)
}

func dur(d time.Duration) rundir.Duration { return rundir.Duration{Duration: d} }

// Kind implements Config.
func (q *QA) Kind() string { return "qa" }

// Validate implements Config: every problem, each naming its field.
func (q *QA) Validate() []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &manifest.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if q.Connections < 1 || q.Connections > 64 {
		add("connections", "%d: want 1 to 64", q.Connections)
	}
	if q.Grid {
		if len(q.Rates) < 2 {
			add("rates", "a grid needs two or more rates")
		}
		for _, r := range q.Rates {
			if !(r > 0) || math.IsInf(r, 0) {
				add("rates", "%v: want a positive rate", r)
			}
		}
	} else if len(q.Rates) > 0 {
		add("rates", "a search picks its own rates: set grid = true for a grid")
	}
	if q.ProbeDuration.Duration < time.Second {
		add("probe_duration", "%s: want at least 1s", q.ProbeDuration.Duration)
	}
	if !q.Grid {
		s := q.searchSweep()
		for _, e := range s.SearchConfig().Validate() {
			field, msg, _ := strings.Cut(e.Error(), ": ")
			add(qaSearchField(field), "%s", msg)
		}
	}
	if !(q.Margin >= 0 && q.Margin < 1) {
		add("margin", "%v: want a fraction from 0 to below 1 (0.5 = half the saturation rate)", q.Margin)
	}
	if !(q.SaturationThreshold > 0 && q.SaturationThreshold < 100) {
		add("saturation_threshold", "%v: want a percentage above 0 and below 100", q.SaturationThreshold)
	}
	if q.MinPairs < 2 || q.MinPairs > 50 {
		add("min_pairs", "%d: want 2 to 50 (a t interval needs two pairs; three make it usable)", q.MinPairs)
	}
	if q.MaxPairs < q.MinPairs || q.MaxPairs > 50 {
		add("max_pairs", "%d: want min_pairs (%d) to 50", q.MaxPairs, q.MinPairs)
	}
	if !(q.Overload > 1 && q.Overload <= 4) {
		add("overload", "%v: want a factor above 1 and at most 4 (the paired runs load each build past its saturation)", q.Overload)
	}
	if q.PairDuration.Duration < 5*time.Second {
		add("pair_duration", "%s: want at least 5s", q.PairDuration.Duration)
	}
	if q.PairOrder != rundir.PairOrderABAB && q.PairOrder != rundir.PairOrderABBA && q.PairOrder != "" {
		add("pair_order", "%q: want %q (the baseline first in every pair) or %q (AB, BA, AB, ...)", q.PairOrder, rundir.PairOrderABAB, rundir.PairOrderABBA)
	}
	if q.Duration.Duration < 5*time.Second {
		add("duration", "%s: want at least 5s", q.Duration.Duration)
	}
	c := q.CompareConfig()
	for _, e := range c.Validate() {
		var fe *manifest.FieldError
		if errors.As(e, &fe) {
			add(fe.Field, "%s", fe.Msg)
		} else {
			errs = append(errs, e)
		}
	}
	if q.MaxRepeats < q.Repeats {
		// Compare reads 0 as "off"; here max_repeats is always stated.
		if q.MaxRepeats == 0 {
			add("max_repeats", "0: want %d (repeats) or more", q.Repeats)
		}
	}
	if q.LE && (q.LERepeats < 1 || q.LERepeats > 20) {
		add("le_repeats", "%d: want 1 to 20", q.LERepeats)
	}
	if q.JudgeLE && !q.LE {
		add("judge_le", "latency emulation is off (latency_emulation = false): nothing to judge")
	}
	if q.Rotate != "" {
		if q.Cycles < 1 || q.Cycles > 200 {
			add("cycles", "%d: want 1 to 200", q.Cycles)
		}
		if q.RotateDuration.Duration < 10*time.Second {
			add("rotate_duration", "%s: want at least 10s", q.RotateDuration.Duration)
		}
		if !(q.CatchUpThreshold > 0) {
			add("catchup_threshold", "%v: want a percentage above 0", q.CatchUpThreshold)
		}
		if q.CatchUpFloor.Duration < 0 {
			add("catchup_floor", "%s: want 0 or more", q.CatchUpFloor.Duration)
		}
	}
	return errs
}

func qaSearchField(f string) string {
	switch f {
	case "start":
		return "start_rate"
	case "min_repeats":
		return "probe_repeats"
	case "max_repeats":
		return "probe_max_repeats"
	case "budget":
		return "search_budget"
	}
	return f
}

// SweepConfig is step 1's sweep (a search, or the grid) for one build.
func (q *QA) SweepConfig() *Sweep {
	if !q.Grid {
		return q.searchSweep()
	}
	s := DefaultSweep()
	s.Connections, s.Rates, s.Duration, s.Repeats = []int{q.Connections}, q.Rates, q.ProbeDuration, 1
	s.Cooldown = dur(30 * time.Second)
	return s
}

func (q *QA) searchSweep() *Sweep {
	s := DefaultSweep()
	s.Search, s.Rates = true, nil
	s.Connections, s.Duration = []int{q.Connections}, q.ProbeDuration
	s.StartRate, s.MaxRate, s.Precision = q.StartRate, q.MaxRate, q.Precision
	s.MinRate = math.Min(10, q.StartRate)
	s.MinRepeats, s.MaxRepeats, s.Budget = q.ProbeRepeats, q.ProbeMax, q.SearchBudget
	s.Cooldown = dur(30 * time.Second)
	return s
}

// CompareConfig is step 2's comparison (adaptive repeats on). The QA
// asks whether the candidate is worse by more than the threshold, so its
// metrics are judged for non-inferiority: an interval wholly below +T
// (worse-positive) passes, however far it reaches on the better side.
func (q *QA) CompareConfig() *Compare {
	return &Compare{Repeats: q.Repeats, MaxRepeats: q.MaxRepeats, Threshold: q.Threshold, FailOn: q.FailOn, NonInferiority: true, Paired: true}
}

// LEConfig is step 3's comparison: fixed repeats.
func (q *QA) LEConfig() *Compare {
	return &Compare{Repeats: q.LERepeats, Threshold: q.Threshold, FailOn: q.FailOn, NonInferiority: true}
}

// PairedRule is step 1's decision rule.
func (q *QA) PairedRule() judge.PairedRule {
	r := judge.DefaultPairedRule()
	r.Threshold = q.SaturationThreshold / 100
	r.MinPairs, r.MaxPairs = q.MinPairs, q.MaxPairs
	return r
}

// QAFromManifest returns the manifest's [qa] table over base (DefaultQA
// or QuickQA), strictly decoded and validated; errors name qa.<field> and
// its line.
func QAFromManifest(m *manifest.Manifest, base *QA) (*QA, error) {
	q := *base
	q.FailOn = slices.Clone(base.FailOn)
	if len(m.QA) > 0 {
		data, err := toml.Marshal(m.QA)
		if err != nil {
			return nil, manifest.Errors{m.Errorf("qa", "%v", err)}
		}
		dec := toml.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			var strict *toml.StrictMissingError
			if errors.As(err, &strict) {
				var errs manifest.Errors
				for _, e := range strict.Errors {
					errs = append(errs, m.Errorf("qa."+joinKey(e.Key()), "unknown key"))
				}
				return nil, errs
			}
			var de *toml.DecodeError
			if errors.As(err, &de) {
				return nil, manifest.Errors{m.Errorf("qa."+joinKey(de.Key()), "%s", strings.TrimPrefix(de.Error(), "toml: "))}
			}
			return nil, manifest.Errors{m.Errorf("qa", "%v", err)}
		}
	}
	if verrs := q.Validate(); len(verrs) > 0 {
		var errs manifest.Errors
		for _, e := range verrs {
			var fe *manifest.FieldError
			if errors.As(e, &fe) {
				errs = append(errs, m.Errorf("qa."+fe.Field, "%s", fe.Msg))
			} else {
				errs = append(errs, m.Errorf("qa", "%v", e))
			}
		}
		return nil, errs
	}
	if err := CheckFailOn(m.Kind(), q.FailOn); err != nil {
		return nil, manifest.Errors{m.Errorf("qa.fail_on", "%v", err)}
	}
	return &q, nil
}

// buildOverride is a variant table setting every node group's release.
func buildOverride(m *manifest.Manifest, ref string, extra func(group map[string]any)) map[string]any {
	groups := map[string]any{}
	for name := range m.Node {
		g := map[string]any{"release": ref}
		if extra != nil {
			extra(g)
		}
		groups[name] = g
	}
	return map[string]any{"node": groups}
}

// WithBuilds returns a copy of m whose [variants] are the two builds:
// baseline (the base) and candidate, every node group on the build's
// release; le adds the AWS zone table with a random zone per node (drawn
// from the manifest's seed), the seeds' latency emulation.
func WithBuilds(m *manifest.Manifest, baseline, candidate string, le bool) *manifest.Manifest {
	c := *m
	var extra func(map[string]any)
	over := func(ref string) map[string]any {
		o := buildOverride(m, ref, extra)
		if le {
			o["network"] = map[string]any{"zones": "aws"}
		}
		return o
	}
	if le {
		extra = func(g map[string]any) { g["zone"] = manifest.RandomZone }
	}
	c.Variants = map[string]any{"base": rundir.QABaseline, rundir.QABaseline: over(baseline), rundir.QACandidate: over(candidate)}
	return &c
}

// BuildManifest is m on one build's release (and load), validated.
func BuildManifest(m *manifest.Manifest, build, ref string) (*manifest.Manifest, error) {
	c := *m
	c.Variants = map[string]any{"base": build, build: buildOverride(m, ref, nil)}
	v, err := c.Variant(build)
	if err != nil {
		return nil, err
	}
	if len(m.Name)+1+len(build) <= 32 {
		v.Name = m.Name + "-" + build
	}
	return v, nil
}

// --- the plan -------------------------------------------------------------

// QACost is the per-run cost model the plan estimates with: a testnet's
// up (to height 2) and down, per node and from the chain's block rate the
// capacity model predicts, plus each run's load, warm-up and drain.
type QACost struct {
	Nodes       int     // of the steady testbed
	RotateNodes int     // of the rotating testbed
	BlockRate   float64 // blocks/s the capacity model predicts for the testbed
	// UpS and RunOverheadS: measured per-run costs when known (a resumed
	// or earlier QA), else the model's.
	UpS, RunOverheadS float64
	// RunnerS is what the runner adds to every testnet's up and down
	// (caps.Record.TestnetS: a swarm's services and tasks), on top of
	// the model's up.
	RunnerS float64
	// TxBytes is one tx's size; Warmup and Grace the manifest's.
	TxBytes       int
	Warmup, Grace time.Duration
	// Note states the capacity model's estimate for the plan.
	Note string
}

// upS: harness start, every node's home and process, two blocks. Measured
// idle on 2026-11-25 (`benchnet run --duration 5s --rate 100`, events.jsonl):
// the 8-node QA testbed and the 4-node quickstart were both up in 2.9 s
// (network up to ready) and the whole run took 13.4 s. Until seeds were
// ready once they answer, every seeded testbed waited ~30 s for its seed's
// crawl, which the old 4 + 2.5 s per node covered; the per-node part left
// is kept for larger testbeds (homes and processes).
func (c QACost) upS(nodes int) float64 {
	if c.UpS > 0 {
		return c.UpS
	}
	rate := c.BlockRate
	if rate <= 0 {
		rate = 1
	}
	return 1 + 0.25*float64(nodes) + 2/rate + c.RunnerS
}

// overheadS: drain, harvest, analysis, report and down of one run.
func (c QACost) overheadS() float64 {
	if c.RunOverheadS > 0 {
		return c.RunOverheadS
	}
	return 6
}

// Disk, measured here (a 4-validator v1.0.1 search, 2026-11-24, a fresh
// testnet per probe of 30 s, ~41 s of wall per probe): ~50 MB of a fresh
// node home and ~3.5 bytes stored per byte of each committed tx per node
// (block store, tx index, WAL); the run directory keeps ~500 bytes per tx
// (txs.csv and the rest). Node homes are removed once their step is done
// (the report reads the run directories only) unless KeepHomes, so the
// need is the largest step's homes plus every step's run directories.
const (
	diskNodeFixed = 50 << 20
	diskPerTxByte = 3.5
	diskRunPerTx  = 500
)

// diskHomes is the node homes of a step; diskRuns its run directories.
func diskHomes(testnets, nodes int, txs float64, txBytes int) int64 {
	return int64(float64(testnets*nodes)*diskNodeFixed + float64(nodes)*txs*float64(txBytes)*diskPerTxByte)
}

func diskRuns(txs float64) int64 { return int64(txs * diskRunPerTx) }

// runHomes: a step of separate runs removes each run's homes as it ends,
// so it holds one run's at a time (all of them with KeepHomes).
func runHomes(runs int, one int64, keep bool) int64 {
	if keep {
		return int64(runs) * one
	}
	return one
}

// PlanQA estimates every step of q on its testbeds: runs, wall time and
// disk. rate is the steady load's per-connection rate (unknown before
// step 1: the search's maximum bounds it).
func PlanQA(q *QA, cost QACost, connections int, withBaseline bool, keepHomes bool) (p rundir.QAPlan) {
	builds := 2
	if !withBaseline {
		builds = 1
	}
	var peak, all int64
	add := func(name string, runs int, wall float64, homes, runDirs int64, what string) {
		p.Steps = append(p.Steps, rundir.QAPlannedStep{Name: name, Runs: runs, WallS: math.Round(wall), DiskBytes: homes + runDirs, What: what})
		p.Runs += runs
		p.WallS += math.Round(wall)
		peak = max(peak, homes)
		all += runDirs
		if keepHomes {
			all += homes
		}
	}
	defer func() {
		p.DiskBytes = all
		if !keepHomes {
			p.DiskBytes += peak
		}
	}()
	// Step 1: a search's probes each get a fresh testnet (isolated: no
	// backlog inherited); a grid's cells share one with a cool-down.
	probeS := cost.upS(cost.Nodes) + q.ProbeDuration.Seconds() + cost.overheadS()
	testnets := q.SearchBudget
	// Before step 1 the saturation is unknown: assume 8 x the search's
	// start rate (two of its x4 steps), at most its maximum; a grid's top rate.
	rate := math.Min(q.MaxRate, 8*q.StartRate)
	// A search's runs: the x4 ramp to the saturation, a bisection down to
	// the precision (far probes decided in one run), two repeats near it.
	probes := min(q.SearchBudget, int(math.Ceil(math.Log(rate/q.StartRate)/math.Log(4)))+1+int(math.Ceil(math.Log2(3/q.Precision)))+2)
	what := fmt.Sprintf("saturation search at c=%d from %g tx/s, precision %g %%, ~%d of at most %d probes of %s, the baseline alone (its operating point)", q.Connections, q.StartRate, q.Precision*100, probes, q.SearchBudget, q.ProbeDuration)
	if q.Grid {
		probes = len(q.Rates)
		rate = slices.Max(q.Rates)
		probeS = q.ProbeDuration.Seconds() + 15
		testnets = 1
		what = fmt.Sprintf("saturation grid c=%d x r %v, %s per cell", q.Connections, q.Rates, q.ProbeDuration)
	}
	txsProbe := rate * float64(q.Connections) * q.ProbeDuration.Seconds() // probes hover around saturation
	searched := []string{rundir.QABaseline, rundir.QACandidate}[2-builds:]
	if !q.Grid {
		searched = searched[:min(1, len(searched))] // the candidate is not searched
		if !withBaseline {
			searched = nil
		}
	}
	for _, b := range searched {
		homes := diskHomes(testnets, cost.Nodes, float64(probes)*txsProbe, cost.TxBytes)
		if !keepHomes && !q.Grid { // each probe's testnet goes once it is down
			homes = diskHomes(1, cost.Nodes, txsProbe, cost.TxBytes)
		}
		add("saturation-"+b, probes, float64(probes)*probeS, homes, diskRuns(float64(probes)*txsProbe), what)
	}
	if !q.Grid {
		pairS := cost.upS(cost.Nodes) + q.PairDuration.Seconds() + cost.overheadS()
		txsPair := rate * q.Overload * float64(q.Connections) * q.PairDuration.Seconds()
		add(PairedStep, 2*q.MinPairs, float64(2*q.MinPairs)*pairS, runHomes(2*q.MaxPairs, diskHomes(1, cost.Nodes, txsPair, cost.TxBytes), keepHomes), diskRuns(float64(2*q.MaxPairs)*txsPair),
			fmt.Sprintf("%d to %d pairs, one run of each build (%s) at %g x the baseline's highest sustainable rate, %s each, until the paired rule decides", q.MinPairs, q.MaxPairs, rundir.PairOrderWords(q.PairOrder), q.Overload, q.PairDuration))
		if extra := q.MaxPairs - q.MinPairs; extra > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("the paired saturation decision may add up to %d pairs (~%s) while its ratio's interval straddles %g, within the budget", extra, time.Duration(float64(2*extra)*pairS)*time.Second, 1-q.SaturationThreshold/100))
		}
	}
	p.Notes = append(p.Notes, fmt.Sprintf("until step 1 decides, the plan assumes saturation near %g tx/s per connection", rate))
	// Steps 2 and 3: one testnet per run.
	steadyRate := rate * (1 - q.Margin)
	runS := cost.upS(cost.Nodes) + cost.Warmup.Seconds() + q.Duration.Seconds() + cost.overheadS()
	txs := steadyRate * float64(q.Connections) * q.Duration.Seconds()
	add("steady", 2*q.Repeats, float64(2*q.Repeats)*runS, runHomes(2*q.MaxRepeats, diskHomes(1, cost.Nodes, txs, cost.TxBytes), keepHomes), diskRuns(float64(2*q.MaxRepeats)*txs),
		fmt.Sprintf("%d runs per build interleaved, %s each; up to %d per build while a judged metric is inconclusive", q.Repeats, q.Duration, q.MaxRepeats))
	if extra := q.MaxRepeats - q.Repeats; extra > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("adaptive repeats may add up to %d pairs (~%s) within the budget, leaving the steps after them their planned time", extra, time.Duration(float64(2*extra)*runS)*time.Second))
	}
	if q.LE {
		add("latency-emulation", 2*q.LERepeats, float64(2*q.LERepeats)*(runS+5), runHomes(2*q.LERepeats, diskHomes(1, cost.Nodes, txs, cost.TxBytes), keepHomes), diskRuns(float64(2*q.LERepeats)*txs),
			fmt.Sprintf("%d runs per build with the AWS zone table, random zones from the seed", q.LERepeats))
	}
	// Step 4.
	if q.Rotate != "" {
		rs := cost.upS(cost.RotateNodes) + cost.Warmup.Seconds() + q.RotateDuration.Seconds() + cost.overheadS()
		for _, b := range []string{rundir.QABaseline, rundir.QACandidate}[2-builds:] {
			add("rotate-"+b, 1, rs, diskHomes(1, cost.RotateNodes, 100*q.RotateDuration.Seconds(), cost.TxBytes), diskRuns(100*q.RotateDuration.Seconds()),
				fmt.Sprintf("%d rotating cycles over a %s load", q.Cycles, q.RotateDuration))
		}
	}
	return p
}

// PlanRefusal says why a plan cannot run: the disk it needs is more than
// is free, or its wall time more than the budget. Both numbers are named,
// and what would shorten it: --quick, unless the plan is already the
// quick profile's.
func PlanRefusal(p rundir.QAPlan, quick bool) error {
	var errs []string
	if p.FreeBytes > 0 && p.DiskBytes > p.FreeBytes {
		errs = append(errs, fmt.Sprintf("needs %s of disk, %s is free", mib(p.DiskBytes), mib(p.FreeBytes)))
	}
	if p.BudgetS > 0 && p.WallS > p.BudgetS {
		shorter := "--quick for the short profile"
		if quick {
			shorter = "--steps to leave scenarios out"
		}
		errs = append(errs, fmt.Sprintf("estimated wall time %s exceeds the budget %s (--budget; %s)",
			time.Duration(p.WallS)*time.Second, time.Duration(p.BudgetS)*time.Second, shorter))
	}
	if len(errs) == 0 {
		return nil
	}
	return &RefusedError{Msg: "qa refused: " + strings.Join(errs, "; ")}
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// TrimToBudget lowers what the budget cannot hold, in a stated order
// (maximum adaptive repeats, then latency-emulation repeats, then rotating
// cycles' load), and says what it trimmed; it stops when the plan fits or
// nothing is left to trim.
func TrimToBudget(q *QA, plan func(*QA) rundir.QAPlan, budget time.Duration) []string {
	var notes []string
	fits := func() bool { return plan(q).WallS <= budget.Seconds() }
	for !fits() && q.MaxRepeats > q.Repeats {
		q.MaxRepeats--
		notes = appendOnce(notes, "trimmed max_repeats to fit the budget")
	}
	for !fits() && q.LE && q.LERepeats > 1 {
		q.LERepeats--
		notes = appendOnce(notes, "trimmed le_repeats to fit the budget")
	}
	for !fits() && q.Rotate != "" && q.RotateDuration.Duration > 60*time.Second {
		q.RotateDuration.Duration -= 30 * time.Second
		notes = appendOnce(notes, "shortened the rotating load to fit the budget")
	}
	if len(notes) > 0 {
		notes[len(notes)-1] += fmt.Sprintf(" (now max_repeats %d, le_repeats %d, rotate_duration %s)", q.MaxRepeats, q.LERepeats, q.RotateDuration)
	}
	return notes
}

// --- Test Results ---------------------------------------------------------

// QAResults fills x.Results, Overall and ExitCode from the steps' verdicts.
// steady and le are the comparisons' indexes (nil: the step did not run),
// rot the rotating runs' catch-up times per build (-1: never caught up).
func QAResults(x *rundir.QAIndex, q *QA, steady, le *rundir.CompareIndex, rotBase, rotCand []float64, rotPlanned int, rotWhy string) {
	date := func(step string) string {
		if s := x.Step(step); s != nil && s.Finished != "" {
			return s.Finished[:10]
		}
		return ""
	}
	ver := x.Candidate.Version()
	x.Results = nil
	if sat := x.Saturation; sat != nil {
		step, why := "saturation-candidate", sat.Why
		if x.Step(PairedStep) != nil {
			step = PairedStep
			if sat.Paired != nil && sat.Paired.Why == sat.Why {
				why = PairedSummary(sat.Paired)
			}
		}
		x.Results = append(x.Results, rundir.QAResult{Scenario: "Saturation point", Date: date(step), Version: ver,
			Result: judge.OutcomeResult(sat.Verdict), Why: fmt.Sprintf("%s: %s", sat.Verdict, why), Judged: true})
	} else {
		x.Results = append(x.Results, rundir.QAResult{Scenario: "Saturation point", Version: ver, Result: judge.ResultInconclusive, Why: "step did not finish", Judged: true})
	}
	if x.Step("steady") != nil {
		x.Results = append(x.Results, compareResult("Steady test", date("steady"), ver, steady, q.FailOn, true))
	}
	for _, c := range []struct {
		step string
		idx  *rundir.CompareIndex
	}{{"steady", steady}, {"latency-emulation", le}} {
		if c.idx == nil {
			continue
		}
		for _, r := range c.idx.TestbedBound {
			x.Warnings = appendOnce(x.Warnings, fmt.Sprintf("%s: testbed-bound %s: left out of the verdict", c.step, r))
		}
	}
	if q.LE && x.Step("latency-emulation") != nil {
		r := compareResult("Latency emulation", date("latency-emulation"), ver, le, q.FailOn, q.JudgeLE)
		if !q.JudgeLE {
			r.Why += " (reported, not judged: --judge-le judges it)"
		}
		x.Results = append(x.Results, r)
	}
	if q.Rotate != "" && x.Step("rotate-candidate") != nil {
		o, why := judge.CatchUpRule(rotBase, rotCand, q.CatchUpThreshold, q.CatchUpFloor.Seconds())
		if o != judge.OutcomeRegression && len(rotCand) < rotPlanned {
			o, why = judge.OutcomeInconclusive, fmt.Sprintf("only %d of %d cycles ran; %s", len(rotCand), rotPlanned, why)
		}
		if rotWhy != "" {
			why = rotWhy + "; " + why
		}
		x.Results = append(x.Results, rundir.QAResult{Scenario: "Rotating nodes", Date: date("rotate-candidate"), Version: ver,
			Result: judge.OutcomeResult(o), Why: fmt.Sprintf("%s: %s", o, why), Judged: true})
	}
	var judged []judge.Result
	for _, r := range x.Results {
		if r.Judged {
			judged = append(judged, r.Result)
		}
	}
	x.Overall = judge.Worst(judged...)
	x.ExitCode = judge.ExitCodeOf(x.Overall)
}

func compareResult(scenario, date, ver string, idx *rundir.CompareIndex, failOn []string, judged bool) rundir.QAResult {
	r := rundir.QAResult{Scenario: scenario, Date: date, Version: ver, Judged: judged}
	if idx == nil {
		r.Result, r.Why = judge.ResultInconclusive, "step did not finish"
		return r
	}
	if why, ok := candidateCannotRun(idx); ok {
		r.Result, r.Why = judge.ResultFail, why
		return r
	}
	var js []judge.Judgement
	for _, vv := range idx.Verdicts {
		js = append(js, vv.Judgements...)
	}
	r.Result, r.Why = judge.ResultOf(js, failOn)
	if tb := TestbedReason(idx); tb != "" && r.Result == judge.ResultInconclusive {
		// Inconclusive (testbed-bound): the runs left out say why.
		r.Why = tb + "; " + r.Why
	}
	if idx.StopReason != "" {
		r.Why += "; " + idx.StopReason
	}
	if !idx.Complete && r.Result == judge.ResultPass {
		r.Result, r.Why = judge.ResultInconclusive, "not every run finished: "+r.Why
	}
	return r
}

// candidateCannotRun is the rule that fails a build which cannot run where
// the other can: at least two candidate runs, every one failed, while at
// least two baseline runs, interleaved with them, all finished. Anything
// less (one failure, failures on both sides) stays a harness problem:
// inconclusive.
func candidateCannotRun(idx *rundir.CompareIndex) (string, bool) {
	var cand, candFailed, base, baseDone int
	var first string
	for _, r := range idx.Runs {
		switch {
		case r.Variant == rundir.QACandidate && r.Status == rundir.RunFailed:
			cand++
			candFailed++
			if first == "" {
				first = r.Error
			}
		case r.Variant == rundir.QACandidate && r.Status == rundir.RunDone:
			cand++
		case r.Variant == rundir.QABaseline && r.Status == rundir.RunDone:
			base++
			baseDone++
		case r.Variant == rundir.QABaseline && r.Status == rundir.RunFailed:
			base++
		}
	}
	if cand >= 2 && candFailed == cand && base >= 2 && baseDone == base {
		return fmt.Sprintf("the candidate cannot run: %d of %d runs failed where the baseline's %d interleaved runs finished (first error: %s)", candFailed, cand, base, first), true
	}
	return "", false
}

// CatchUps lists each rotating cycle's catch-up time in cycle order (-1:
// never caught up), the duplicates counted, and a summary.
func CatchUps(f *rundir.FaultResults) ([]float64, int) {
	cs := slices.Clone(f.Cycles)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Cycle < cs[j].Cycle })
	var out []float64
	dups := 0
	for _, c := range cs {
		out = append(out, c.CatchUpS)
		dups += c.Duplicates
	}
	return out, dups
}

// sameJSON reports whether a and b encode the same JSON value, whatever
// their layout.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// ReuseBaseline marks x's baseline-only steps (saturation and rotating) as
// done from an earlier QA directory's. It refuses when the testbeds, the
// method (the QA configuration) or the baseline differ, and warns when the
// machine does. The steady steps always run both builds: their runs are
// interleaved so machine drift lands on both.
func ReuseBaseline(x *rundir.QAIndex, earlierDir string, earlier *rundir.QAIndex, manifests, earlierManifests [][]byte) ([]string, error) {
	return ReuseOperatingPoint(x, earlierDir, earlier, manifests, earlierManifests, false)
}

// ReuseOperatingPoint is ReuseBaseline, and with anyBaseline also from an
// earlier QA of another baseline build, with a warning: a bisection's
// confirmation pairs a commit with its parent at the good build's
// operating point, the parent having been judged the same as it.
func ReuseOperatingPoint(x *rundir.QAIndex, earlierDir string, earlier *rundir.QAIndex, manifests, earlierManifests [][]byte, anyBaseline bool) ([]string, error) {
	var why, warns []string
	switch {
	case earlier.Baseline.Ref != x.Baseline.Ref && anyBaseline:
		warns = append(warns, fmt.Sprintf("--baseline-from %s: the operating point of its baseline %s is used for %s", earlierDir, earlier.Baseline.Ref, x.Baseline.Ref))
	case earlier.Baseline.Ref != x.Baseline.Ref:
		why = append(why, fmt.Sprintf("its baseline is %s, not %s", earlier.Baseline.Ref, x.Baseline.Ref))
	}
	if len(manifests) != len(earlierManifests) {
		why = append(why, "the testbed differs (a rotating testbed in one only)")
	} else {
		for i := range manifests {
			if string(manifests[i]) != string(earlierManifests[i]) {
				why = append(why, "the testbed differs (the QA manifests are not the same bytes)")
				break
			}
		}
	}
	// Compared as JSON values: qa.json keeps the earlier one indented.
	if !sameJSON(earlier.Config, x.Config) {
		why = append(why, "the method differs (the QA configuration: profile, repeats, thresholds, durations)")
	}
	if len(why) > 0 {
		return nil, &RefusedError{Msg: fmt.Sprintf("--baseline-from %s refused: %s", earlierDir, strings.Join(why, "; "))}
	}
	if earlier.Machine != nil && x.Machine != nil && (earlier.Machine.CPUs != x.Machine.CPUs || earlier.Machine.CPUModel != x.Machine.CPUModel ||
		earlier.Machine.MemoryBytes != x.Machine.MemoryBytes || earlier.Machine.Kernel != x.Machine.Kernel || earlier.Machine.Hostname != x.Machine.Hostname) {
		warns = append(warns, fmt.Sprintf("--baseline-from %s: its machine differs from this one: the baseline's measurements may not compare", earlierDir))
	}
	n := 0
	for _, name := range []string{"saturation-baseline", "rotate-baseline"} {
		old, cur := earlier.Step(name), x.Step(name)
		if cur == nil {
			continue
		}
		if old == nil || old.Status != rundir.StepDone {
			return nil, &RefusedError{Msg: fmt.Sprintf("--baseline-from %s refused: its step %s did not finish", earlierDir, name)}
		}
		*cur = *old
		cur.Dir, cur.Reused = rundir.StepPath(earlierDir, old), true
		if !filepath.IsAbs(cur.Dir) {
			if abs, err := filepath.Abs(cur.Dir); err == nil {
				cur.Dir = abs
			}
		}
		n++
	}
	x.BaselineFrom = earlierDir
	return warns, nil
}

// WithReleases returns a copy of m whose [variants] are the builds of a
// release line, every node group on the build's release, control the base
// (its name among the returned ones); names are the variants' names in the
// order of refs, read from the references ("v0.38.17" becomes v0-38-17).
func WithReleases(m *manifest.Manifest, refs []string, control string) (*manifest.Manifest, []string) {
	c := *m
	vs := map[string]any{}
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = releaseVariantName(ref, i, vs)
		vs[names[i]] = buildOverride(m, ref, nil)
		if ref == control {
			vs["base"] = names[i]
		}
	}
	c.Variants = vs
	return &c, names
}

// releaseVariantName is a variant name for ref: its version (a tag), or
// its last path element (a tree or a binary), made of [a-z0-9-], unique
// among taken (else b<i+1>).
func releaseVariantName(ref string, i int, taken map[string]any) string {
	s := ref
	if _, v, ok := strings.Cut(ref, "@"); ok {
		s = v
		if strings.HasPrefix(ref, "tendermint@") {
			s = "tm-" + v
		}
	} else {
		s = filepath.Base(strings.TrimPrefix(ref, "file:"))
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 20 {
		name = name[:20]
	}
	if _, dup := taken[name]; name == "" || name == "base" || dup {
		name = fmt.Sprintf("b%d", i+1)
	}
	return name
}
