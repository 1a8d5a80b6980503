// Package historyreport is `benchnet history`'s view of one series of the
// history store across builds: each judged metric drawn over the builds in
// release order with every repeat, the change points marked (judge's
// E-Divisive with a permutation test), a build recorded in several sessions
// used as the control for machine drift, written as history.md,
// history.html and one plot per metric, a CSV of every value, and a text
// summary (docs/history.md).
package historyreport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchnet/benchnet/internal/history"
	"github.com/benchnet/benchnet/internal/judge"
)

// Options choose what the view draws and how.
type Options struct {
	// Metrics are the metric keys to draw: empty, the headline ones
	// (Headline) present; ["all"], every judged metric present.
	Metrics []string
	// Order names builds to put first, in this order (--order); the rest
	// follow in release order.
	Order []string
	// Commits orders the commits of tree builds (history.GitCommitOrder);
	// nil orders them by first record.
	Commits history.CommitOrder
	// Seed of the permutation tests (0: DefaultSeed): the same store gives
	// the same change points.
	Seed uint64
}

// OptionError is a bad Options field, named by the flag that sets it.
type OptionError struct {
	Flag string // --metric, --order
	Err  error
}

func (e *OptionError) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// DefaultSeed seeds every permutation test of the view.
const DefaultSeed = 1

// BusyTPS is the throughput a QA's paired saturation decision used, over
// the busy span of each run (the history records it as busy_tps).
var BusyTPS = judge.Metric{Key: "busy_tps", Name: "saturation throughput (paired runs, busy span)", Unit: "tx/s", Better: judge.HigherIsBetter}

// Headline are the metrics drawn by default, where present: the ones the
// change-point method's false-alarm rate was measured on
// (docs/history-changepoints.md). Drawing every metric multiplies the
// false alarms by the number of metrics.
var Headline = []string{"busy_tps", "tps", "latency_avg", "latency_p95", "blocks_per_min"}

// View is one series across its builds.
type View struct {
	Series  history.Series
	Machine history.Machine
	Records int
	Sources int
	// Builds in the order drawn (release order, or --order's).
	Builds []history.BuildRef
	// Unnamed: the builds an Order list left out, drawn after it.
	Unnamed []string
	Notes   []string
	Lines   []*Line
	// Skipped: records no line draws, by why.
	Skipped []Skipped
}

// Skipped counts the records no line draws for one reason.
type Skipped struct {
	Why     string
	Records int
}

// Line is the records of one step, load and emulation profile: what may be
// compared build against build (docs/history.md).
type Line struct {
	ID    string // l1, l2 …: names its plots
	Title string
	key   lineKey
	// Builds with records in this line, in the view's order.
	Builds  []string
	Records []*history.Record
	// Sessions is how many directories (sources) its records come from.
	Sessions  int
	Metrics   []*Metric
	Intervals []Interval // a saturation line's
	Notes     []string
}

// Metric is one metric of a line across its builds.
type Metric struct {
	judge.Metric
	// Points: one per build with a value of it, in the view's order.
	Points []Point
	// Tested: the change-point test ran; ChangePoints are what it found.
	Tested       bool
	ChangePoints []judge.ChangePoint
	// Refused says why the change points are withheld ("not comparable:
	// …": the control build drifted).
	Refused string
	// Drift says what each control build's sessions showed.
	Drift []string
	// Problem says why no test ran.
	Problem string
}

// Point is one build's repeats of a metric.
type Point struct {
	Build   string
	Samples []Sample
}

// Sample is one repeat's value, with where it came from.
type Sample struct {
	Value    float64
	Repeat   int
	Excluded string // why a judgement leaves it out ("" counted)
	Valid    bool
	Source   string
	Part     string
	Started  string
	Dir      string
	// Rate is a QA pair's overload rate (history.PairRate; 0: none).
	Rate float64
}

// Counted are the values a judgement counts.
func (p Point) Counted() []float64 {
	var out []float64
	for _, s := range p.Samples {
		if s.Excluded == "" {
			out = append(out, s.Value)
		}
	}
	return out
}

// Mean of the counted values; ok false when there are none.
func (p Point) Mean() (float64, bool) {
	c := p.Counted()
	if len(c) == 0 {
		return 0, false
	}
	return judge.SpreadOf(c).Mean, true
}

// Interval is one saturation record: where its search placed the rate.
type Interval struct {
	Build       string
	Connections int
	Lo, Hi      float64
	Outcome     string
	Source      string
	Started     string
}

type lineKey struct {
	saturation  bool
	step        string
	rate        float64
	connections int
	durationSec float64
	size        int
	latency     bool
	zones       string
}

// Steps in the order a QA runs them; lines of other steps follow.
var stepRank = map[string]int{"saturation": 0, "saturation-paired": 1, "steady": 2, "latency-emulation": 3, "rotate": 4, "": 5}

func compareLineKeys(a, b lineKey) int {
	rank := func(k lineKey) int {
		if k.saturation {
			return -1
		}
		if r, ok := stepRank[k.step]; ok {
			return r
		}
		return len(stepRank)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.step, b.step), cmp.Compare(a.connections, b.connections),
		cmp.Compare(a.rate, b.rate), cmp.Compare(a.durationSec, b.durationSec), cmp.Compare(a.size, b.size),
		boolCmp(a.latency, b.latency), strings.Compare(a.zones, b.zones))
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// pairedOnly: a QA's paired runs are loaded past the baseline's saturation
// point, a rate each QA chooses; their busy-span throughput is the
// capacity whatever that rate was, their other values are not comparable
// across QAs.
const pairedStep = "saturation-paired"

// lineOf is the line a record belongs to, or why it is drawn in none.
func lineOf(r *history.Record) (lineKey, string) {
	k := lineKey{step: r.Step, rate: r.Load.Rate, connections: r.Load.Connections, durationSec: r.Load.DurationSec,
		size: r.Load.Size, latency: r.Emulation.Latency, zones: r.Emulation.Zones}
	switch {
	case r.Saturation != nil:
		k.saturation, k.rate = true, 0
	case r.Kind == "search" || r.Step == "saturation":
		return k, "probes of a saturation search: their search's interval stands for them"
	case r.Step == pairedStep:
		k.rate = 0
	}
	return k, ""
}

func (k lineKey) title() string {
	var parts []string
	switch {
	case k.saturation && k.step != "":
		parts = append(parts, k.step+" (the searched interval)")
	case k.saturation:
		parts = append(parts, "saturation search (the searched interval)")
	case k.step == pairedStep:
		parts = append(parts, k.step+" (busy-span throughput, at each QA's own overload)")
	case k.step != "":
		parts = append(parts, k.step)
	}
	load := fmt.Sprintf("%d connection(s)", k.connections)
	if k.rate > 0 {
		load += fmt.Sprintf(" × %g tx/s", k.rate)
	}
	load += ", " + (time.Duration(k.durationSec * float64(time.Second))).String()
	if k.size > 0 {
		load += fmt.Sprintf(", %d B txs", k.size)
	}
	parts = append(parts, load)
	switch {
	case k.latency && k.zones != "":
		parts = append(parts, "emulated latency ("+k.zones+")")
	case k.latency:
		parts = append(parts, "emulated latency")
	}
	return strings.Join(parts, " · ")
}

// Label is a record's build as the view tells builds apart: its build
// label, and for a source tree or a binary file what made that build (a
// tree's commit and diff, a file's hash), since one path is many builds
// over time. "(unknown build)" without provenance.
func Label(r *history.Record) string {
	l := history.BuildLabel(r.Builds)
	if l == "" {
		return "(unknown build)"
	}
	b, ok := history.NodeBuild(r.Builds)
	switch {
	case !ok:
	case b.Kind == "tree" && b.Commit != "":
		l += "@" + prefix(b.Commit, 12)
		if b.Dirty {
			l += "+dirty." + prefix(b.DiffSHA256, 8)
		}
	case b.Kind == "tree" && b.ContentSHA256 != "":
		l += "#" + prefix(b.ContentSHA256, 12)
	case b.Kind == "file" && b.BinarySHA256 != "":
		l += "#" + prefix(b.BinarySHA256, 12)
	}
	return l
}

func prefix(s string, n int) string { return s[:min(n, len(s))] }

// Build makes the view of series s from its records (Store.Records).
func Build(ctx context.Context, s history.Series, recs []*history.Record, opts Options) (*View, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("series %s: no records", s.Scenario)
	}
	v := &View{Series: s, Machine: recs[0].Machine, Records: len(recs)}
	byLabel := map[string]int{}
	var refs []history.BuildRef
	sources := map[string]bool{}
	for _, r := range recs {
		sources[r.Source] = true
		l := Label(r)
		i, ok := byLabel[l]
		if !ok {
			byLabel[l] = len(refs)
			refs = append(refs, history.BuildRef{Label: l, Builds: r.Builds, First: r.Started})
			continue
		}
		if r.Started != "" && (refs[i].First == "" || r.Started < refs[i].First) {
			refs[i].First = r.Started
		}
	}
	v.Sources = len(sources)
	v.Notes = history.SortReleases(ctx, refs, opts.Commits)
	if len(opts.Order) > 0 {
		var err error
		if refs, v.Unnamed, err = history.OrderBy(refs, opts.Order); err != nil {
			return nil, &OptionError{Flag: "--order", Err: err}
		}
	}
	v.Builds = refs
	pos := map[string]int{}
	for i, r := range refs {
		pos[r.Label] = i
	}

	lines := map[lineKey]*Line{}
	for _, r := range recs {
		k, skip := lineOf(r)
		if skip != "" {
			i := slices.IndexFunc(v.Skipped, func(s Skipped) bool { return s.Why == skip })
			if i < 0 {
				i = len(v.Skipped)
				v.Skipped = append(v.Skipped, Skipped{Why: skip})
			}
			v.Skipped[i].Records++
			continue
		}
		l := lines[k]
		if l == nil {
			l = &Line{Title: k.title(), key: k}
			lines[k] = l
		}
		l.Records = append(l.Records, r)
	}
	for _, l := range lines {
		v.Lines = append(v.Lines, l)
	}
	slices.SortFunc(v.Lines, func(a, b *Line) int { return compareLineKeys(a.key, b.key) })
	for i, l := range v.Lines {
		l.ID = fmt.Sprintf("l%d", i+1)
		srcs := map[string]bool{}
		for _, r := range l.Records {
			srcs[r.Source] = true
			if !slices.Contains(l.Builds, Label(r)) {
				l.Builds = append(l.Builds, Label(r))
			}
		}
		l.Sessions = len(srcs)
		slices.SortFunc(l.Builds, func(a, b string) int { return cmp.Compare(pos[a], pos[b]) })
		// Records in the view's build order, then as they ran.
		slices.SortStableFunc(l.Records, func(a, b *history.Record) int {
			return cmp.Or(cmp.Compare(pos[Label(a)], pos[Label(b)]), strings.Compare(a.Started, b.Started), strings.Compare(a.Source, b.Source))
		})
	}

	choose, err := metricChooser(v.Lines, recs, opts.Metrics)
	if err != nil {
		return nil, &OptionError{Flag: "--metric", Err: err}
	}
	seed := cmp.Or(opts.Seed, DefaultSeed)
	for _, l := range v.Lines {
		if l.key.saturation {
			l.intervals()
			continue
		}
		for _, m := range choose(l) {
			l.Metrics = append(l.Metrics, l.metric(m, seed))
		}
		if l.Sessions > 1 && len(l.Builds) > 1 && !l.hasControl() {
			l.Notes = append(l.Notes, fmt.Sprintf("measured in %d sessions and no build was recorded in more than one: a drift of the machine between them cannot be told from a change point (docs/history-changepoints.md)", l.Sessions))
		}
	}
	return v, nil
}

func (l *Line) intervals() {
	for _, r := range l.Records {
		s := r.Saturation
		l.Intervals = append(l.Intervals, Interval{Build: Label(r), Connections: s.Connections, Lo: s.Lo, Hi: s.Hi,
			Outcome: s.Outcome, Source: r.Source, Started: r.Started})
	}
}

// sessions groups a build's records by source: a source is one sitting
// (a run, a compare, a QA), in the order they ran.
func (l *Line) sessions(build string) [][]*history.Record {
	var out [][]*history.Record
	idx := map[string]int{}
	for _, r := range l.Records { // sorted by start within a build
		if Label(r) != build {
			continue
		}
		i, ok := idx[r.Source]
		if !ok {
			i = len(out)
			idx[r.Source] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

func (l *Line) hasControl() bool {
	for _, b := range l.Builds {
		if len(l.sessions(b)) > 1 {
			return true
		}
	}
	return false
}

func samplesOf(rs []*history.Record, key string) []Sample {
	var out []Sample
	for _, r := range rs {
		for _, u := range r.Runs {
			if x, ok := u.Values[key]; ok {
				out = append(out, Sample{Value: x, Repeat: u.Repeat, Excluded: u.Excluded, Valid: u.Valid,
					Source: r.Source, Part: r.Part, Started: r.Started, Dir: u.Dir, Rate: u.Values[history.PairRate]})
			}
		}
	}
	return out
}

// rngFor is a random source for one test, from the seed and what it
// tests: a test's answer does not depend on which others ran before it.
func rngFor(seed uint64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func (l *Line) metric(m judge.Metric, seed uint64) *Metric {
	out := &Metric{Metric: m}
	var series []judge.SeriesPoint
	for _, b := range l.Builds {
		var rs []*history.Record
		for _, r := range l.Records {
			if Label(r) == b {
				rs = append(rs, r)
			}
		}
		p := Point{Build: b, Samples: samplesOf(rs, m.Key)}
		if len(p.Samples) == 0 {
			continue
		}
		out.Points = append(out.Points, p)
		if c := p.Counted(); len(c) > 0 {
			series = append(series, judge.SeriesPoint{Label: b, Values: c})
		}
	}
	if len(l.Builds) < 2 {
		return out
	}
	if len(series) < 2 {
		out.Problem = "fewer than two builds have a counted value"
		return out
	}
	// A build recorded in several sessions is the control: its own change
	// between them is the machine's drift, and a step measured across
	// them is not comparable, unless the builds shared it (interleaved).
	apart := -1.0 // l.interleaving(), once a control drifted
	minEffect := judge.DefaultChangeConfig(m.Better).MinEffect
	for _, b := range l.Builds {
		ss := l.sessions(b)
		if len(ss) < 2 {
			continue
		}
		control, rates := controlAtOneRate(ss, m.Key)
		if len(control) < 2 {
			if len(rates) > 1 {
				out.Drift = append(out.Drift, fmt.Sprintf("control %s: drift not checked: its sessions' counted pairs ran at different overload rates (%s tx/s per connection), and a capacity under overload depends on the overload", b, joinRates(rates)))
			}
			continue
		}
		d, err := judge.CheckDrift(control, judge.DefaultDriftConfig(), rngFor(seed, l.Title, m.Key, "drift", b))
		bound := 0.0
		if d.Drifted {
			if apart < 0 {
				apart = l.interleaving()
			}
			bound = driftBound(d, apart)
		}
		switch {
		case errors.Is(err, judge.ErrNotComparable) && d.Drifted && bound <= math.Log1p(minEffect):
			// Interleaved builds share the drift: it cannot make the
			// smallest step the test marks.
			out.Drift = append(out.Drift, fmt.Sprintf("control %s moved %+.1f %% [%+.1f %%, %+.1f %%] between %s and %s (p = %.3g), but the builds were measured interleaved (their run times %.2f apart, as a Kolmogorov distance): a drift moves one build against another by at most %.1f %%, under the %g %% a change point needs, so it is not refused",
				b, 100*(d.Ratio-1), 100*(d.Lo-1), 100*(d.Hi-1), d.From, d.To, d.P, apart, 100*math.Expm1(bound), 100*minEffect))
		case errors.Is(err, judge.ErrNotComparable):
			out.Drift = append(out.Drift, fmt.Sprintf("control %s: %v", b, err))
			if out.Refused == "" {
				out.Refused = fmt.Sprintf("not comparable: control %s: %v", b, err)
			}
		case err != nil:
			out.Drift = append(out.Drift, fmt.Sprintf("control %s: drift not checked: %v", b, err))
		case d.Lo > 0:
			out.Drift = append(out.Drift, fmt.Sprintf("control %s over %d sessions: no drift (%s to %s: ×%s [%s, %s])", b, len(control), d.From, d.To, ratio(d.Ratio), ratio(d.Lo), ratio(d.Hi)))
		default:
			out.Drift = append(out.Drift, fmt.Sprintf("control %s over %d sessions: no drift found (too few repeats a session for an interval)", b, len(control)))
		}
	}
	if out.Refused != "" {
		return out
	}
	cps, err := judge.ChangePoints(series, judge.DefaultChangeConfig(m.Better), rngFor(seed, l.Title, m.Key))
	if err != nil {
		out.Problem = "no change-point test: " + err.Error()
		return out
	}
	out.Tested, out.ChangePoints = true, cps
	return out
}

func ratio(x float64) string { return fmt.Sprintf("%.3f", x) }

// driftBound is the largest log step a control's drift d can make between
// two builds of a line: the drift's farthest plausible size (its
// interval's far end) times how far apart in time the builds ran (apart,
// Line.interleaving).
func driftBound(d judge.Drift, apart float64) float64 {
	far := math.Abs(math.Log(d.Ratio))
	for _, x := range []float64{d.Lo, d.Hi} {
		if x > 0 {
			far = max(far, math.Abs(math.Log(x)))
		}
	}
	return far * apart
}

// interleaving is how far apart in time the line's builds were measured:
// the largest Kolmogorov distance between two builds' record start times
// (records that started together count as one moment). 0: every build ran
// at the same moments (one compare's rounds); 1: one build wholly before
// another (sessions on different days). A step in the machine's speed at
// any moment moves one build's mean against another's by at most this
// share of the step, and a drift that builds share makes no change point.
func (l *Line) interleaving() float64 {
	n := map[string]int{}
	type event struct {
		at    time.Time
		build string
	}
	var evs []event
	for _, r := range l.Records {
		at, err := time.Parse(time.RFC3339, r.Started)
		if err != nil {
			return 1 // no time to go by: assume the worst
		}
		b := Label(r)
		n[b]++
		evs = append(evs, event{at, b})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return a.at.Compare(b.at) })
	worst := 0.0
	for _, a := range l.Builds {
		for _, b := range l.Builds {
			if a >= b || n[a] == 0 || n[b] == 0 {
				continue
			}
			seenA, seenB := 0, 0
			for i, e := range evs {
				switch e.build {
				case a:
					seenA++
				case b:
					seenB++
				}
				if i+1 < len(evs) && evs[i+1].at.Equal(e.at) {
					continue // a tie is one moment
				}
				worst = max(worst, math.Abs(float64(seenA)/float64(n[a])-float64(seenB)/float64(n[b])))
			}
		}
	}
	return worst
}

// controlAtOneRate is a control build's counted values per session. Where
// the values carry a QA pair's overload rate, only the rate most sessions
// share counts (a control QA that raised its pairs to 1993 tx/s against a
// line's 1440 read as +12.4 % drift, 2026-11-28); rates lists the rates
// seen when no two sessions share one.
func controlAtOneRate(sessions [][]*history.Record, key string) (control []judge.SeriesPoint, rates []float64) {
	type session struct {
		label  string
		byRate map[float64][]float64
	}
	var all []session
	count := map[float64]int{} // sessions per rate
	for _, s := range sessions {
		ss := session{label: filepath.Base(s[0].Source), byRate: map[float64][]float64{}}
		for _, x := range samplesOf(s, key) {
			if x.Excluded == "" {
				ss.byRate[x.Rate] = append(ss.byRate[x.Rate], x.Value)
			}
		}
		for r := range ss.byRate {
			count[r]++
		}
		all = append(all, ss)
	}
	best, n := 0.0, 0
	for r, c := range count {
		if c > n || (c == n && r < best) {
			best, n = r, c
		}
	}
	if n < 2 {
		for r := range count {
			rates = append(rates, r)
		}
		slices.Sort(rates)
		return nil, rates
	}
	for _, ss := range all {
		if vals := ss.byRate[best]; len(vals) > 0 {
			control = append(control, judge.SeriesPoint{Label: ss.label, Values: vals})
		}
	}
	return control, nil
}

func joinRates(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// metricChooser checks the requested metrics against the series and
// returns what each line draws.
func metricChooser(lines []*Line, recs []*history.Record, want []string) (func(*Line) []judge.Metric, error) {
	known := map[string]judge.Metric{BusyTPS.Key: BusyTPS}
	var order []string // the tables' order, busy_tps first
	order = append(order, BusyTPS.Key)
	kinds := map[string]bool{}
	for _, r := range recs {
		if kinds[r.NodeKind] {
			continue
		}
		kinds[r.NodeKind] = true
		ms, _ := judge.MetricsOf(r.NodeKind)
		for _, m := range ms {
			if _, ok := known[m.Key]; !ok {
				known[m.Key] = m
				order = append(order, m.Key)
			}
		}
	}
	present := func(l *Line, key string) bool {
		if l.key.saturation || (l.key.step == pairedStep && key != BusyTPS.Key) {
			return false
		}
		for _, r := range l.Records {
			for _, u := range r.Runs {
				if _, ok := u.Values[key]; ok {
					return true
				}
			}
		}
		return false
	}
	anyLine := func(key string) bool {
		for _, l := range lines {
			if present(l, key) {
				return true
			}
		}
		return false
	}
	var list []string
	switch {
	case len(want) == 0:
		list = Headline
	case len(want) == 1 && want[0] == "all":
		list = order
	default:
		var have []string
		for _, k := range order {
			if anyLine(k) {
				have = append(have, k)
			}
		}
		for i, k := range want {
			switch _, ok := known[k]; {
			case k == "all":
				return nil, errors.New(`"all" stands alone, not in a list`)
			case !ok:
				return nil, fmt.Errorf("unknown metric %q (this series has: %s)", k, strings.Join(have, ", "))
			case slices.Contains(want[:i], k):
				return nil, fmt.Errorf("metric %q named twice", k)
			case !anyLine(k):
				return nil, fmt.Errorf("metric %q has no value in this series (it has: %s)", k, strings.Join(have, ", "))
			}
		}
		list = want
	}
	pick := func(l *Line, keys []string) []judge.Metric {
		var out []judge.Metric
		for _, k := range keys {
			if m, ok := known[k]; ok && present(l, k) && m.Better != 0 {
				out = append(out, m)
			}
		}
		return out
	}
	return func(l *Line) []judge.Metric {
		out := pick(l, list)
		if len(out) == 0 && len(want) == 0 {
			// A kind without the headline metrics (gossipsub): its own.
			out = pick(l, order)
		}
		return out
	}, nil
}

// pct is a ratio as a signed change in percent.
func pct(r float64) string {
	v := math.Round((r-1)*1000) / 10
	if v == 0 {
		v = 0
	}
	return fmt.Sprintf("%+.1f %%", v)
}
