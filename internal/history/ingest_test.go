package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/history/historytest"
	_ "github.com/benchnet/benchnet/internal/kinds" // the judged metrics of each node kind (figures)
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// TestHistoryFromRunDir: each kind of finished directory gives the records
// it should, keyed alike where the testbed is the same, and adding it twice
// to a store keeps one copy.
func TestHistoryFromRunDir(t *testing.T) {
	const v1, v2 = "cometbft@v1.0.1", "cometbft@v0.38.17"
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, dir string)
		parts []string // every record's Part, in order
		check func(t *testing.T, recs []*Record)
	}{
		{"run", func(t *testing.T, dir string) { historytest.Run(t, dir, v1, 5.5) }, []string{""},
			func(t *testing.T, recs []*Record) {
				r := recs[0]
				if r.Kind != "run" || r.Scenario != "quickstart" || r.NodeKind != "cometbft" || r.Started != "2026-11-20T10:00:00Z" {
					t.Errorf("keys: %+v", r)
				}
				if r.Load != (Load{Rate: 6, Connections: 1, DurationSec: 10, Size: 1024}) || r.Emulation.Latency {
					t.Errorf("load %+v, emulation %+v", r.Load, r.Emulation)
				}
				if r.Machine.CPUModel != "Test CPU @ 2.0GHz" || r.Machine.MemoryMB != 4096 || r.Machine.Key() != "b52e7db65403" {
					t.Errorf("machine %+v", r.Machine)
				}
				if len(r.Builds) != 1 || r.Builds[0].Reference != v1 || r.Builds[0].Version != "v1.0.1" || r.Builds[0].BinarySHA256 == "" {
					t.Errorf("builds %+v", r.Builds)
				}
				run := r.Runs[0]
				if run.Values["tps"] != 5.5 || run.Values["latency_p50"] == 0 || run.Latency == nil || run.Latency.N == 0 || run.Excluded != "" {
					t.Errorf("run %+v", run)
				}
			}},
		{"soak", func(t *testing.T, dir string) { historytest.Soak(t, dir, v1, 5, 120) }, []string{""},
			func(t *testing.T, recs []*Record) {
				if recs[0].Kind != "soak" || recs[0].Runs[0].Values["soak_half_life_sec"] != 120 {
					t.Errorf("soak: %+v", recs[0])
				}
			}},
		{"compare", func(t *testing.T, dir string) {
			historytest.Compare(t, dir, true, historytest.Variant{Name: "old", Release: v2, TPS: []float64{5, 6, 7}},
				historytest.Variant{Name: "new", Release: v1, TPS: []float64{8, 9, 10}})
		}, []string{"variant old", "variant new"},
			func(t *testing.T, recs []*Record) {
				for i, want := range [][]float64{{5, 6, 7}, {8, 9, 10}} {
					var got []float64
					for j, r := range recs[i].Runs {
						got = append(got, r.Values["tps"])
						if r.Repeat != j+1 {
							t.Errorf("%s: repeat %d at %d", recs[i].Part, r.Repeat, j)
						}
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: tps %v, want %v", recs[i].Part, got, want)
					}
				}
				if BuildLabel(recs[0].Builds) != v2 || BuildLabel(recs[1].Builds) != v1 {
					t.Errorf("builds: %s, %s", BuildLabel(recs[0].Builds), BuildLabel(recs[1].Builds))
				}
				// One testbed on two builds: one series.
				if recs[0].TestbedHash != recs[1].TestbedHash || recs[0].Kind != "compare" {
					t.Errorf("testbeds %s %s, kind %s", recs[0].TestbedHash, recs[1].TestbedHash, recs[0].Kind)
				}
			}},
		{"sweep", func(t *testing.T, dir string) {
			historytest.Sweep(t, dir, v1, historytest.Cell{Rate: 100, TPS: 99}, historytest.Cell{Rate: 200, TPS: 150, Saturated: true})
		}, []string{"saturation c=1 d=10s", "cell c=1 d=10s r=100", "cell c=1 d=10s r=200"},
			func(t *testing.T, recs []*Record) {
				sat := recs[0]
				if sat.Saturation == nil || sat.Saturation.Lo != 100 || sat.Saturation.Hi != 200 || !strings.HasPrefix(sat.Saturation.Outcome, "saturated") {
					t.Errorf("saturation %+v", sat.Saturation)
				}
				if len(sat.Probes) != 2 || sat.Probes[1].State != "saturated" || sat.Probes[0].TPS != 99 || sat.Load.Rate != 0 || len(sat.Runs) != 0 {
					t.Errorf("probes %+v, load %+v", sat.Probes, sat.Load)
				}
				if recs[2].Load.Rate != 200 || recs[2].Runs[0].Values["tps"] != 150 || recs[1].TestbedHash != recs[2].TestbedHash {
					t.Errorf("cell r=200: %+v", recs[2])
				}
			}},
		{"qa", func(t *testing.T, dir string) { historytest.QA(t, dir, true, v2, v1) },
			[]string{"saturation-baseline/saturation c=1 d=10s", "saturation-baseline/cell c=1 d=10s r=200", "saturation-baseline/cell c=1 d=10s r=400",
				"saturation-paired/baseline", "saturation-paired/candidate", "steady/variant baseline", "steady/variant candidate"},
			func(t *testing.T, recs []*Record) {
				for _, r := range recs {
					if r.Kind != "qa" || r.Scenario != "qa" || !filepath.IsAbs(r.Source) || r.Step == "" {
						t.Errorf("%s: kind %s, scenario %s, source %s, step %q", r.Part, r.Kind, r.Scenario, r.Source, r.Step)
					}
				}
				base, cand := recs[3], recs[4]
				if base.Step != "saturation-paired" || base.Variant != "baseline" || BuildLabel(cand.Builds) != v1 || BuildLabel(base.Builds) != v2 {
					t.Errorf("pairs: %+v / %+v", base, cand)
				}
				if len(cand.Runs) != 2 || cand.Runs[1].Values["busy_tps"] != 200 || !strings.HasPrefix(cand.Runs[1].Excluded, "testbed-bound") || cand.Runs[0].Excluded != "" {
					t.Errorf("candidate's pairs: %+v", cand.Runs)
				}
				if recs[0].Step != "saturation" || recs[0].Variant != "baseline" {
					t.Errorf("the saturation step is %q of %q", recs[0].Step, recs[0].Variant)
				}
				if recs[5].Step != "steady" || recs[5].TestbedHash != recs[6].TestbedHash || len(recs[6].Runs) != 2 {
					t.Errorf("steady: %+v", recs[5:])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), historytest.Stamp(0)+"-quickstart")
			tc.make(t, dir)
			b, err := FromRunDir(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, r := range b.Records {
				parts = append(parts, r.Part)
				if r.Source != dir {
					t.Errorf("%s: source %s, want %s", r.Part, r.Source, dir)
				}
			}
			if !slices.Equal(parts, tc.parts) {
				t.Fatalf("parts %q, want %q", parts, tc.parts)
			}
			tc.check(t, b.Records)

			s, _ := openTemp(t)
			for round, want := range []Outcome{Added, Skipped} {
				b, err := FromRunDir(ctx, dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range b.Records {
					if o, _, err := s.Add(ctx, r); err != nil || o != want {
						t.Errorf("round %d, %s: %v %v, want %v", round, r.Part, o, err, want)
					}
				}
			}
			stored, err := s.Records(ctx, Query{Source: dir})
			if err != nil || len(stored) != len(tc.parts) {
				t.Errorf("stored %d records (%v), want %d", len(stored), err, len(tc.parts))
			}
		})
	}
}

// TestHistoryQASkips: a QA's step that did not run is named, not recorded.
func TestHistoryQASkips(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qa")
	historytest.QA(t, dir, true, "cometbft@v0.38.17", "cometbft@v1.0.1")
	b, err := FromRunDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Skipped) != 1 || !strings.Contains(b.Skipped[0], "step rotate-baseline is skipped") {
		t.Errorf("skipped: %q", b.Skipped)
	}
}

// TestHistoryUnfinished: an unfinished directory is refused, naming it and
// what is missing; a directory benchnet did not write is refused too.
func TestHistoryUnfinished(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		want []string // in the message
	}{
		{"run without results", func(t *testing.T, dir string) {
			historytest.Run(t, dir, "cometbft@v1.0.1", 5)
			os.Remove(filepath.Join(dir, rundir.ResultsFile))
		}, []string{"is not finished: results.json", "benchnet analyze"}},
		{"compare not complete", func(t *testing.T, dir string) {
			historytest.Compare(t, dir, false, historytest.Variant{Name: "a", Release: "cometbft@v1.0.1", TPS: []float64{5}})
		}, []string{"is not finished: compare.json is not complete", "--resume"}},
		{"qa not complete", func(t *testing.T, dir string) { historytest.QA(t, dir, false, "cometbft@v1.0.1", "cometbft@v1.0.1") },
			[]string{"is not finished: qa.json is not complete", "benchnet qa --resume"}},
		{"compare run gone", func(t *testing.T, dir string) {
			historytest.Compare(t, dir, true, historytest.Variant{Name: "a", Release: "cometbft@v1.0.1", TPS: []float64{5, 6}})
			runs, _ := filepath.Glob(filepath.Join(dir, "runs", "*"))
			os.Remove(filepath.Join(runs[1], rundir.ResultsFile))
		}, []string{"variant a, run 2", "is not finished: results.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			tc.make(t, dir)
			_, err := FromRunDir(context.Background(), dir)
			var ue *UnfinishedError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not an UnfinishedError", err)
			}
			for _, want := range append(tc.want, dir) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
	empty := t.TempDir()
	if _, err := FromRunDir(context.Background(), empty); err == nil || !strings.Contains(err.Error(), empty+" is not a directory benchnet wrote") {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestHistoryTestbedHash: the hash ignores what is keyed elsewhere (name,
// releases, the load profile) and sees the testbed itself.
func TestHistoryTestbedHash(t *testing.T) {
	base := "name = \"a\"\n[network]\nzones = \"\"\n[node.validator]\ncount = 4\nrelease = \"cometbft@v1.0.1\"\n[load]\nrate = 100\n"
	load := manifest.Load{Rate: 100, Connections: 1, Size: 1024, Transport: "websocket"}
	h0, err := TestbedHash([]byte(base), load)
	if err != nil {
		t.Fatal(err)
	}
	other := load
	other.Rate, other.Connections, other.Size = 400, 4, 512
	for _, tc := range []struct {
		name     string
		manifest string
		load     manifest.Load
		same     bool
	}{
		{"another name, release and load profile", strings.NewReplacer(`"a"`, `"b"`, "v1.0.1", "v0.38.17", "rate = 100", "rate = 9").Replace(base), other, true},
		{"another node count", strings.Replace(base, "count = 4", "count = 7", 1), load, false},
		{"latency emulation", strings.Replace(base, `zones = ""`, `zones = "aws"`, 1), load, false},
		{"another transport", base, manifest.Load{Rate: 100, Connections: 1, Size: 1024, Transport: "http"}, false},
	} {
		h, err := TestbedHash([]byte(tc.manifest), tc.load)
		if err != nil {
			t.Fatal(err)
		}
		if (h == h0) != tc.same {
			t.Errorf("%s: hash %s vs %s, same = %v, want %v", tc.name, h, h0, h == h0, tc.same)
		}
	}
}
