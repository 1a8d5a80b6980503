package historyreport

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/history"
	_ "github.com/benchnet/benchnet/internal/kinds/kindtest" // the metric tables
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/testenv"
)

var testMachine = history.Machine{CPUModel: "Test CPU", CPUs: 2, Kernel: "6.1.0", MemoryMB: 8000}

// rec is a record of release rel (a tag) in a compare directory source:
// its repeats' values by metric, one value per repeat.
func rec(source, part, rel, started string, vals map[string][]float64) *history.Record {
	name, v, _ := strings.Cut(rel, "@")
	mod := "github.com/cometbft/cometbft"
	if name == "tendermint" {
		mod = "github.com/tendermint/tendermint"
	}
	r := &history.Record{Source: source, Part: part, Kind: "compare", Variant: part, Scenario: "quickstart", NodeKind: "cometbft",
		TestbedHash: "00112233445566ff", Load: history.Load{Rate: 200, Connections: 2, DurationSec: 90, Size: 1024}, Machine: testMachine,
		Builds:  []history.Build{{Release: rel, Program: "cometbft", Reference: rel, Kind: "tag", Module: mod, Version: v}},
		Started: started}
	n := 0
	for _, xs := range vals {
		n = max(n, len(xs))
	}
	for i := range n {
		u := history.Run{Repeat: i + 1, Dir: fmt.Sprintf("%s/runs/%s-%d", source, part, i+1), Valid: true, Values: map[string]float64{}}
		for k, xs := range vals {
			if i < len(xs) {
				u.Values[k] = xs[i]
			}
		}
		r.Runs = append(r.Runs, u)
	}
	return r
}

// noise draws n values around mean with a log-normal spread sd, as the
// recorded A/A runs spread (docs/history-changepoints.md).
func noise(rng *rand.Rand, n int, mean, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Round(mean*math.Exp(sd*rng.NormFloat64())*100) / 100
	}
	return out
}

// store adds recs to a new temporary database and reads the one series
// of scenario back, as `benchnet history` does.
func store(t *testing.T, recs ...*history.Record) (history.Series, []*history.Record) {
	t.Helper()
	ctx := context.Background()
	s, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range recs {
		if _, _, err := s.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Select(all, Selection{Scenario: "quickstart"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Records(ctx, history.Query{Scenario: x.Scenario, TestbedHash: x.TestbedHash, MachineKey: x.MachineKey})
	if err != nil {
		t.Fatal(err)
	}
	return x, got
}

func metricOf(t *testing.T, v *View, line int, key string) *Metric {
	t.Helper()
	for _, m := range v.Lines[line].Metrics {
		if m.Key == key {
			return m
		}
	}
	t.Fatalf("line %d (%s) has no metric %s", line, v.Lines[line].Title, key)
	return nil
}

// sixBuilds is an interleaved series of 6 builds × 5 repeats in one
// compare directory: step multiplies tps from build 3 on.
func sixBuilds(seed uint64, step float64) []*history.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	var recs []*history.Record
	// Added newest first: the view orders by release, not by insertion.
	for i := 5; i >= 0; i-- {
		f := 1.0
		if i >= 3 {
			f = step
		}
		recs = append(recs, rec("/runs/20261120-100000-aa-compare", fmt.Sprintf("variant b%d", i), fmt.Sprintf("cometbft@v1.0.%d", i+1), "2026-11-20T10:00:00Z",
			map[string][]float64{"tps": noise(rng, 5, 500*f, 0.065), "latency_avg": noise(rng, 5, 900, 0.2), "blocks_per_min": noise(rng, 5, 60, 0.1)}))
	}
	return recs
}

// TestViewAA: one build recorded as 6 builds of 5 repeats with the same
// noise marks no change point on any metric; a 25 % drop of tps planted at
// the fourth build is marked there, its interval holding 0.75, and only
// tps moves.
func TestViewAA(t *testing.T) {
	for _, tc := range []struct {
		name string
		step float64
	}{{"A/A", 1}, {"step -25 %", 0.75}} {
		t.Run(tc.name, func(t *testing.T) {
			s, recs := store(t, sixBuilds(42, tc.step)...)
			v, err := Build(context.Background(), s, recs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Lines) != 1 || len(v.Lines[0].Builds) != 6 || v.Lines[0].Builds[0] != "cometbft@v1.0.1" || v.Lines[0].Builds[5] != "cometbft@v1.0.6" {
				t.Fatalf("lines %+v", v.Lines)
			}
			var keys []string
			for _, m := range v.Lines[0].Metrics {
				keys = append(keys, m.Key)
				if !m.Tested || m.Refused != "" || m.Problem != "" {
					t.Errorf("%s: tested %v, refused %q, problem %q", m.Key, m.Tested, m.Refused, m.Problem)
				}
				if len(m.Points) != 6 || len(m.Points[0].Samples) != 5 {
					t.Errorf("%s: %d points, %d repeats in the first, want 6 of 5", m.Key, len(m.Points), len(m.Points[0].Samples))
				}
				cps := m.ChangePoints
				if tc.step == 1 || m.Key != "tps" {
					if len(cps) != 0 {
						t.Errorf("%s: change points %+v on an unchanged metric", m.Key, cps)
					}
					continue
				}
				if len(cps) != 1 || cps[0].After != "cometbft@v1.0.4" || cps[0].Before != "cometbft@v1.0.3" || cps[0].Direction != "worse" ||
					cps[0].Lo > 0.75 || cps[0].Hi < 0.75 {
					t.Errorf("tps: change points %+v, want one before cometbft@v1.0.4, worse, interval holding 0.75", cps)
				}
			}
			if !slices.Equal(keys, []string{"tps", "latency_avg", "blocks_per_min"}) {
				t.Errorf("metrics %q: want the headline ones present, in order", keys)
			}
		})
	}
}

// TestViewDrift: a build recorded in two sessions is the control; when
// the second session ran 20 % slower the metric's change points are
// refused, naming the drift, rather than marking the step the machine
// made; without the drift the same series is judged and the control's
// check is reported.
func TestViewDrift(t *testing.T) {
	for _, tc := range []struct {
		name    string
		drift   float64
		refused bool
	}{{"drifted", 0.8, true}, {"steady machine", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			s1, s2 := "/runs/20261120-100000-s1-compare", "/runs/20261201-100000-s2-compare"
			vals := func(n int, f float64) map[string][]float64 {
				return map[string][]float64{"tps": noise(rng, n, 500*f, 0.065)}
			}
			s, recs := store(t,
				rec(s1, "variant a", "cometbft@v0.38.17", "2026-11-20T10:00:00Z", vals(5, 1)),
				rec(s1, "variant control", "cometbft@v1.0.1", "2026-11-20T10:00:00Z", vals(10, 1)),
				rec(s2, "variant control", "cometbft@v1.0.1", "2026-12-01T10:00:00Z", vals(10, tc.drift)),
				rec(s2, "variant c", "cometbft@v1.1.0", "2026-12-01T10:00:00Z", vals(5, tc.drift)))
			v, err := Build(context.Background(), s, recs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := metricOf(t, v, 0, "tps")
			if len(m.Drift) != 1 {
				t.Fatalf("drift checks %q, want one (the control)", m.Drift)
			}
			if tc.refused {
				if !strings.HasPrefix(m.Refused, "not comparable: control cometbft@v1.0.1: machine drifted by -") || m.Tested || len(m.ChangePoints) != 0 {
					t.Errorf("refused %q, tested %v, change points %+v", m.Refused, m.Tested, m.ChangePoints)
				}
				var out bytes.Buffer
				v.Summary(&out)
				if !strings.Contains(out.String(), "    not comparable: control cometbft@v1.0.1: machine drifted by") || strings.Contains(out.String(), "change point ") {
					t.Errorf("summary:\n%s", out.String())
				}
				return
			}
			if m.Refused != "" || !m.Tested || !strings.Contains(m.Drift[0], "no drift") {
				t.Errorf("refused %q, tested %v, drift %q", m.Refused, m.Tested, m.Drift)
			}
		})
	}
}

// TestViewDriftInterleaved: three builds recorded one run a session, the
// machine 15 % slower from halfway on. Measured round-robin (ABC CBA …)
// every build meets the drift alike: each control's own sessions show it,
// but the interleaving bounds the step it can make below the 5 % a change
// point needs, so nothing is refused and no step is marked. Measured one
// build after another, the same drift falls between builds and refuses the
// metric (bench/history/aa.sh on real nodes: a -6 % control "drift" at
// p = 0.085 refused both latencies of an interleaved series).
func TestViewDriftInterleaved(t *testing.T) {
	builds := []string{"cometbft@v1.0.1", "cometbft@v1.0.2", "cometbft@v1.0.3"}
	for _, tc := range []struct {
		name        string
		interleaved bool
	}{{"round-robin", true}, {"one build after another", false}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 5))
			t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
			var recs []*history.Record
			for i := range 30 {
				b := i / 10 // one build after another
				if tc.interleaved {
					round, k := i/3, i%3
					if round%2 == 1 {
						k = 2 - k
					}
					b = k
				}
				f := 1.0
				if i >= 15 {
					f = 0.85
				}
				at := t0.Add(time.Duration(i) * time.Minute)
				recs = append(recs, rec(fmt.Sprintf("/runs/%s-quickstart", at.Format("20060102-150405")), "run", builds[b], at.Format(time.RFC3339),
					map[string][]float64{"tps": noise(rng, 1, 500*f, 0.02)}))
			}
			s, got := store(t, recs...)
			v, err := Build(context.Background(), s, got, Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := metricOf(t, v, 0, "tps")
			k := v.Lines[0].interleaving()
			if tc.interleaved {
				if !(k > 0 && k <= 0.15) {
					t.Errorf("interleaving %.3f, want at most 0.15 for 10 alternating rounds", k)
				}
				if m.Refused != "" || !m.Tested || len(m.ChangePoints) != 0 {
					t.Errorf("refused %q, tested %v, change points %+v", m.Refused, m.Tested, m.ChangePoints)
				}
				if !slices.ContainsFunc(m.Drift, func(d string) bool {
					return strings.Contains(d, "measured interleaved") && strings.Contains(d, "not refused")
				}) {
					t.Errorf("no control's drift was reported as shared: %q", m.Drift)
				}
				return
			}
			if k != 1 {
				t.Errorf("interleaving %.3f, want 1 (builds measured apart)", k)
			}
			if !strings.HasPrefix(m.Refused, "not comparable: control cometbft@v1.0.2: machine drifted by -") || m.Tested {
				t.Errorf("refused %q, tested %v", m.Refused, m.Tested)
			}
		})
	}
}

// TestViewDriftRates: a control whose sessions' pairs ran at different
// overload rates is not judged for drift (a capacity under overload
// depends on the overload) and refuses nothing; where two sessions share a
// rate, only their pairs at it are compared.
func TestViewDriftRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	s1, s2 := "/runs/20261120-100000-s1-qa", "/runs/20261201-100000-s2-qa"
	at := func(n int, f, rate float64) map[string][]float64 {
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = rate
		}
		return map[string][]float64{"busy_tps": noise(rng, n, 1300*f, 0.05), history.PairRate: rs}
	}
	merge := func(a, b map[string][]float64) map[string][]float64 {
		for k, v := range b {
			a[k] = append(a[k], v...)
		}
		return a
	}
	for _, tc := range []struct {
		name        string
		second      map[string][]float64
		wantDrift   string
		wantRefused bool
	}{
		{"different rates", at(6, 1.12, 1993), "drift not checked: its sessions' counted pairs ran at different overload rates (1440, 1993 tx/s per connection)", false},
		// The second session raised some pairs: its 1440 ones are compared.
		{"a shared rate", merge(at(6, 1, 1440), at(6, 1.3, 1993)), "no drift", false},
		{"a shared rate, drifted", merge(at(6, 0.8, 1440), at(6, 1, 1993)), "machine drifted by -", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, recs := store(t,
				rec(s1, "baseline", "cometbft@v0.38.17", "2026-11-20T10:00:00Z", at(5, 0.6, 1440)),
				rec(s1, "candidate", "cometbft@v1.0.1", "2026-11-20T10:00:00Z", at(6, 1, 1440)),
				rec(s2, "candidate", "cometbft@v1.0.1", "2026-12-01T10:00:00Z", tc.second))
			v, err := Build(context.Background(), s, recs, Options{Metrics: []string{"busy_tps"}})
			if err != nil {
				t.Fatal(err)
			}
			m := metricOf(t, v, 0, "busy_tps")
			if len(m.Drift) != 1 || !strings.Contains(m.Drift[0], tc.wantDrift) {
				t.Fatalf("drift %q, want %q", m.Drift, tc.wantDrift)
			}
			if (m.Refused != "") != tc.wantRefused {
				t.Errorf("refused %q, want refused %v", m.Refused, tc.wantRefused)
			}
		})
	}
}

// TestSelect: one series is chosen without flags; several are refused
// naming the flag that tells them apart and the choices, a scenario of
// two machines above all (never merged); a prefix of a key selects.
func TestSelect(t *testing.T) {
	a := history.Series{Scenario: "quickstart", TestbedHash: "00112233445566ff", MachineKey: "b52e7db65403", CPUModel: "EPYC", CPUs: 2, Records: 4}
	b := history.Series{Scenario: "quickstart", TestbedHash: "00112233445566ff", MachineKey: "9f00aa11bb22", CPUModel: "Xeon", CPUs: 8, Records: 2}
	c := history.Series{Scenario: "quickstart", TestbedHash: "ffeeddccbbaa9988", MachineKey: "b52e7db65403", CPUModel: "EPYC", CPUs: 2, Records: 1}
	q := history.Series{Scenario: "qa", TestbedHash: "0123456789abcdef", MachineKey: "b52e7db65403", Records: 9}
	for _, tc := range []struct {
		name   string
		all    []history.Series
		sel    Selection
		want   history.Series
		err    string
		choose bool
	}{
		{"one series", []history.Series{q}, Selection{}, q, "", false},
		{"by scenario", []history.Series{a, q}, Selection{Scenario: "qa"}, q, "", false},
		{"several scenarios", []history.Series{a, q}, Selection{}, history.Series{}, "choose one with --scenario NAME (qa, quickstart)", true},
		{"two machines", []history.Series{a, b, q}, Selection{Scenario: "quickstart"}, history.Series{},
			"scenario quickstart was recorded on 2 machines, whose results are never one series: choose one with --machine KEY: 9f00aa11bb22 (Xeon × 8, 2 records), b52e7db65403 (EPYC × 2, 4 records)", true},
		{"two machines, two testbeds", []history.Series{a, b, c}, Selection{Scenario: "quickstart"}, history.Series{}, "--machine KEY", true},
		{"machine prefix", []history.Series{a, b, q}, Selection{Scenario: "quickstart", Machine: "9f"}, b, "", false},
		{"two testbeds", []history.Series{a, c}, Selection{Scenario: "quickstart"}, history.Series{}, "choose one with --testbed HASH: 00112233445566ff (4 records", true},
		{"testbed prefix", []history.Series{a, c}, Selection{Scenario: "quickstart", Testbed: "ffee"}, c, "", false},
		{"no match", []history.Series{a, q}, Selection{Scenario: "nope", Machine: "b5"}, history.Series{}, "no series matches --scenario nope --machine b5 (scenarios: qa, quickstart)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(tc.all, tc.sel)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var ce *ChooseError
			if err == nil || !strings.Contains(err.Error(), tc.err) || errors.As(err, &ce) != tc.choose {
				t.Fatalf("error %v (a choice: %v), want %q (a choice: %v)", err, errors.As(err, &ce), tc.err, tc.choose)
			}
			if tc.choose && len(ce.Choices) < 2 {
				t.Errorf("choices %+v", ce.Choices)
			}
		})
	}
}

// TestViewOptionErrors: a bad --metric or --order is an OptionError
// naming its flag.
func TestViewOptionErrors(t *testing.T) {
	s, recs := store(t, sixBuilds(1, 1)...)
	for _, tc := range []struct {
		name string
		opts Options
		flag string
		err  string
	}{
		{"unknown metric", Options{Metrics: []string{"tsp"}}, "--metric", `unknown metric "tsp" (this series has: tps, latency_avg, blocks_per_min)`},
		{"absent metric", Options{Metrics: []string{"latency_p99"}}, "--metric", `metric "latency_p99" has no value in this series`},
		{"metric twice", Options{Metrics: []string{"tps", "tps"}}, "--metric", "named twice"},
		{"all in a list", Options{Metrics: []string{"tps", "all"}}, "--metric", "stands alone"},
		{"unknown build", Options{Order: []string{"cometbft@v9.9.9"}}, "--order", `"cometbft@v9.9.9" names no build of this series`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), s, recs, tc.opts)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Flag != tc.flag || !strings.HasPrefix(err.Error(), tc.flag+": ") || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %s: …%s", err, tc.flag, tc.err)
			}
		})
	}
	v, err := Build(context.Background(), s, recs, Options{Metrics: []string{"all"}, Order: []string{"cometbft@v1.0.6"}})
	if err != nil {
		t.Fatal(err)
	}
	if l := v.Lines[0]; l.Builds[0] != "cometbft@v1.0.6" || l.Builds[1] != "cometbft@v1.0.1" || len(l.Metrics) != 3 || len(v.Unnamed) != 5 {
		t.Errorf("--order put %q first, %d metrics, unnamed %q", l.Builds, len(l.Metrics), v.Unnamed)
	}
}

// goldenSeries is a QA-like series: a saturation interval, paired runs at
// each QA's own rate, a steady line with a 25 % step and a left-out run,
// a load measured on one build, and a search probe; Tendermint Core and
// CometBFT builds, stored out of release order.
func goldenSeries() []*history.Record {
	rng := rand.New(rand.NewPCG(11, 11))
	var recs []*history.Record
	builds := []string{"cometbft@v1.0.1", "tendermint@v0.34.22", "cometbft@v0.38.17", "cometbft@v0.34.35"}
	f := map[string]float64{"tendermint@v0.34.22": 1, "cometbft@v0.34.35": 1, "cometbft@v0.38.17": 1, "cometbft@v1.0.1": 0.75}
	for i, b := range builds {
		src := fmt.Sprintf("/runs/2026112%d-100000-qa-qa", i)
		started := fmt.Sprintf("2026-11-2%dT10:00:00Z", i)
		paired := rec(src, "saturation-paired/baseline", b, started, map[string][]float64{"busy_tps": noise(rng, 3, 900*f[b], 0.05), "tps": noise(rng, 3, 700, 0.05)})
		paired.Kind, paired.Step, paired.Load.Rate, paired.Load.DurationSec = "qa", "saturation-paired", 400+float64(10*i), 20
		steady := rec(src, "steady/variant baseline", b, started, map[string][]float64{
			"tps": noise(rng, 3, 480*f[b], 0.03), "latency_avg": noise(rng, 3, 800, 0.05), "latency_p95": noise(rng, 3, 1400, 0.05), "latency_p99": noise(rng, 3, 2000, 0.05)})
		steady.Kind, steady.Step = "qa", "steady"
		if i == 2 {
			steady.Runs[1].Excluded = "testbed-bound: steal 7 %"
		}
		recs = append(recs, paired, steady)
		if i < 2 {
			sat := rec(src, "saturation-baseline/saturation c=2 d=1m30s", b, started, nil)
			sat.Kind, sat.Step, sat.Load.Rate = "qa", "saturation", 0
			sat.Saturation = &history.Saturation{Connections: 2, Lo: 200 * f[b], Hi: 400 * f[b], Outcome: "found", Rule: "r"}
			probe := rec(src, "saturation-baseline/cell c=2 d=1m30s r=400", b, started, map[string][]float64{"tps": {790}})
			probe.Kind, probe.Step, probe.Load.Rate = "qa", "saturation", 400
			recs = append(recs, sat, probe)
		}
	}
	one := rec("/runs/20261125-100000-quickstart-compare", "variant only", "cometbft@v1.0.1", "2026-11-25T10:00:00Z", map[string][]float64{"tps": {300, 301}})
	one.Load.Rate = 150
	return append(recs, one)
}

// TestHistoryMarkdown: history.md of the golden series (builds in release
// order, the intervals, the paired line of several rates as one, the
// change point on steady tps and paired busy_tps, the left-out run, the
// one-build line, the probe left out), and the files Write makes.
func TestHistoryMarkdown(t *testing.T) {
	s, recs := store(t, goldenSeries()...)
	v, err := Build(context.Background(), s, recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Write(v, dir)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join("testdata", "history.md"), md)
	// history.md and .html, and one plot per metric of each drawn line:
	// paired busy_tps, steady tps, latency_avg and latency_p95.
	if len(files) != 6 || filepath.Base(files[0]) != MarkdownFile || filepath.Base(files[1]) != HTMLFile {
		t.Errorf("files %q", files)
	}
	html, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	if n := strings.Count(string(html), `src="data:image/png;base64,`); n != 4 {
		t.Errorf("history.html has %d inline plots, want 4", n)
	}
	for _, f := range files[2:] {
		if b, err := os.ReadFile(f); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", f, err)
		}
		if filepath.Dir(f) != filepath.Join(dir, page.PlotsDir) {
			t.Errorf("%s: not in %s", f, page.PlotsDir)
		}
	}
}

// TestHistoryCSV: one row per repeat and metric drawn, builds in release
// order with their place, the left-out run with its reason.
func TestHistoryCSV(t *testing.T) {
	s, recs := store(t, goldenSeries()...)
	v, err := Build(context.Background(), s, recs, Options{Metrics: []string{"tps"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := v.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], CSVHead) {
		t.Fatalf("head %q", rows[0])
	}
	// tps is drawn on steady (4 builds × 3) and the one-build line (2);
	// the paired line draws busy_tps alone.
	if len(rows) != 1+12+2 {
		t.Fatalf("%d rows, want 15:\n%q", len(rows), rows)
	}
	want := []string{"steady · 2 connection(s) × 200 tx/s, 1m30s, 1024 B txs", "1", "tendermint@v0.34.22", "1", "tps"}
	if !slices.Equal(rows[1][:5], want) {
		t.Errorf("first row %q, want it to start %q", rows[1], want)
	}
	var left []string
	for _, r := range rows[1:] {
		if r[6] != "" {
			left = r
		}
	}
	if left == nil || left[2] != "cometbft@v0.38.17" || left[1] != "3" || left[3] != "2" || left[6] != "testbed-bound: steal 7 %" ||
		left[8] != "/runs/20261122-100000-qa-qa" || left[9] != "steady/variant baseline" || left[10] != "2026-11-22T10:00:00Z" {
		t.Errorf("left-out row %q", left)
	}
}

// TestViewTreeBuilds: one source tree recorded at two commits is two
// builds, after the tag of its version, in commit order where the tree
// can tell it and in first-record order where it cannot; a dirty tree is
// a build of its own.
func TestViewTreeBuilds(t *testing.T) {
	tree := t.TempDir()
	treeRec := func(source, commit, started string, dirty bool) *history.Record {
		r := rec(source, "variant tree", "cometbft@v1.0.1", started, map[string][]float64{"tps": {500, 501, 499}})
		r.Builds = []history.Build{{Release: "cometbft@v1.0.1+tree." + commit, Program: "cometbft", Reference: tree, Kind: "tree",
			Module: "github.com/cometbft/cometbft", Version: "v1.0.1", Commit: commit, Dirty: dirty, DiffSHA256: "d1ffd1ffd1ff"}}
		return r
	}
	older, newer := "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	recs := []*history.Record{
		rec("/runs/1-compare", "variant tag", "cometbft@v1.0.1", "2026-11-20T10:00:00Z", map[string][]float64{"tps": {500, 502, 498}}),
		treeRec("/runs/2-compare", newer, "2026-11-21T10:00:00Z", false),
		treeRec("/runs/3-compare", older, "2026-11-22T10:00:00Z", false),
		treeRec("/runs/4-compare", older, "2026-11-23T10:00:00Z", true),
	}
	s, got := store(t, recs...)
	commits := func(_ context.Context, dir string, cs []string) (map[string]int, error) {
		if dir != tree {
			return nil, errors.New("not this tree")
		}
		return map[string]int{older: 10, newer: 11}, nil
	}
	tag, o, n, d := "cometbft@v1.0.1", tree+"@"+older[:12], tree+"@"+newer[:12], tree+"@"+older[:12]+"+dirty.d1ffd1ff"
	for _, tc := range []struct {
		name    string
		commits history.CommitOrder
		want    []string
	}{
		{"commit order", commits, []string{tag, o, d, n}},
		{"first recorded", nil, []string{tag, n, o, d}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Build(context.Background(), s, got, Options{Commits: tc.commits})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.Lines[0].Builds, tc.want) {
				t.Errorf("builds %q, want %q", v.Lines[0].Builds, tc.want)
			}
		})
	}
}

// TestViewBadValues: a value the change-point test cannot take (0, a
// negative one) leaves that metric untested with the reason, and the
// report is still written.
func TestViewBadValues(t *testing.T) {
	s, recs := store(t,
		rec("/runs/1-compare", "variant a", "cometbft@v0.38.17", "2026-11-20T10:00:00Z", map[string][]float64{"tps": {500, 0, 498}, "latency_avg": {800, -5, 810}}),
		rec("/runs/1-compare", "variant b", "cometbft@v1.0.1", "2026-11-20T10:00:00Z", map[string][]float64{"tps": {500, 502, 498}, "latency_avg": {800, 805, 810}}))
	v, err := Build(context.Background(), s, recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tps", "latency_avg"} {
		if m := metricOf(t, v, 0, key); m.Tested || !strings.Contains(m.Problem, "want a positive number") {
			t.Errorf("%s: tested %v, problem %q", key, m.Tested, m.Problem)
		}
	}
	if _, err := Write(v, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
