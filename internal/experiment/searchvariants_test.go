package experiment

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

func TestInterleaveOrder(t *testing.T) {
	var got [][]int
	for k := 0; k < 4; k++ {
		got = append(got, InterleaveOrder(k, 3))
	}
	want := [][]int{{0, 1, 2}, {2, 1, 0}, {0, 1, 2}, {2, 1, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestSearchVariants(t *testing.T) {
	cfg := *DefaultSweep()
	cfg.Search, cfg.Connections, cfg.Rates = true, []int{1}, nil
	cfg.Duration = rundir.Duration{Duration: 10 * time.Second}
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	// Two builds: the candidate saturates 20 % earlier.
	caps := map[string]float64{"baseline": 1500, "candidate": 1200}
	var ran []string // which variant each measurement belonged to
	up := 0          // testnets up at once
	var variants []Variant
	var nets []*fakeNet
	for _, name := range []string{"baseline", "candidate"} {
		d, f, _ := newSweepDir(t, cfg)
		f.capacity = caps[name]
		nets = append(nets, f)
		variants = append(variants, Variant{Name: name, Dir: d, Open: func(ctx context.Context) (Testnet, error) {
			up++
			if up > 1 {
				t.Errorf("%s opened while another testnet is up", name)
			}
			ran = append(ran, name)
			env, err := f.open(ctx)
			return &countingEnv{Testnet: env, up: &up}, err
		}})
	}
	res, err := SearchVariants(context.Background(), variants, nil)
	if err != nil {
		t.Fatal(err)
	}
	if up != 0 {
		t.Errorf("%d testnets left up", up)
	}
	// Strict alternation ABBA while both search: a, b, b, a, a, b, ...
	n := min(res[0].State.Runs, res[1].State.Runs)
	for k := 0; k < n; k++ {
		pair := ran[2*k : 2*k+2]
		want := []string{"baseline", "candidate"}
		if k%2 == 1 {
			want = []string{"candidate", "baseline"}
		}
		if !reflect.DeepEqual(pair, want) {
			t.Fatalf("round %d ran %v, want %v (all: %v)", k+1, pair, want, ran)
		}
	}
	if len(ran) != res[0].State.Runs+res[1].State.Runs {
		t.Errorf("%d runs, states say %d + %d", len(ran), res[0].State.Runs, res[1].State.Runs)
	}
	for i, r := range res {
		c := caps[r.Name]
		if r.State.Outcome != judge.Found || !r.Bracketed || !(r.Interval.Low <= c/0.99 && c < r.Interval.High) {
			t.Errorf("%s: %s %s for a capacity of %g (%s)", r.Name, r.State.Outcome, r.Interval, c, r.State.Detail)
		}
		x, err := rundir.SweepRecord.Read(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if !x.Complete || !x.Config.Fresh || len(x.Testnets) != r.State.Runs || nets[i].opened != nets[i].closed {
			t.Errorf("%s: complete %v fresh %v, %d testnets for %d runs, opened %d closed %d", r.Name, x.Complete, x.Config.Fresh, len(x.Testnets), r.State.Runs, nets[i].opened, nets[i].closed)
		}
	}
	v := judge.CompareSaturation(res[0].Interval, res[1].Interval, 0.05)
	if v.Outcome != judge.OutcomeRegression {
		t.Errorf("verdict %s: %s", v.Outcome, v.Why)
	}
	// A grid is refused, by name.
	g, _, _ := newSweepDir(t, grid2x2())
	if _, err := SearchVariants(context.Background(), []Variant{{Name: "grid", Dir: g, Open: nets[0].open}}, nil); err == nil || !strings.Contains(err.Error(), `"grid"`) {
		t.Errorf("grid variant: %v", err)
	}
}

type countingEnv struct {
	Testnet
	up *int
}

func (e *countingEnv) Close(ctx context.Context) error { *e.up--; return e.Testnet.Close(ctx) }

// buildLab measures each manifest on its own fake chain.
type buildLab struct {
	nets map[*manifest.Manifest]*fakeNet
}

func (l *buildLab) Open(ctx context.Context, m *manifest.Manifest, dir string) (Testnet, error) {
	n := l.nets[m]
	n.root = filepath.Dir(dir)
	return n.open(ctx)
}

func (l *buildLab) Steady(ctx context.Context, m *manifest.Manifest, dir string) (string, error) {
	return "", errors.New("no steady runs here")
}

func TestSearchBuilds(t *testing.T) {
	base, err := manifest.Parse("cmp.toml", []byte(cmpManifest))
	if err != nil {
		t.Fatal(err)
	}
	cand, _ := manifest.Parse("cmp.toml", []byte(cmpManifest))
	lab := &buildLab{nets: map[*manifest.Manifest]*fakeNet{base: {capacity: 1000}, cand: {capacity: 1020}}}
	env := Env{Lab: lab, Output: t.TempDir()}
	cfg := *DefaultSweep()
	cfg.Connections = []int{1}
	builds := []Build{{"baseline", base}, {"candidate", cand}}
	res, err := SearchBuilds(context.Background(), env, cfg, builds)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.State.Outcome != judge.Found || filepath.Base(r.Dir) != r.Name {
			t.Errorf("%s in %s: %s %s", r.Name, r.Dir, r.State.Outcome, r.Interval)
		}
		x, err := rundir.SweepRecord.Read(r.Dir)
		if err != nil || !x.Complete || x.Kind != "search" {
			t.Fatalf("%s: %v %+v", r.Name, err, x)
		}
	}
	// 2 % apart, each bracketed within 5 %: the verdict cannot be
	// "regression" or "improvement".
	if v := judge.CompareSaturation(res[0].Interval, res[1].Interval, 0.05); v.Outcome == judge.OutcomeRegression || v.Outcome == judge.OutcomeImprovement {
		t.Errorf("A/A-like builds: %s (%s)", v.Outcome, v.Why)
	}
	// Resume of a finished pair measures nothing more.
	before := lab.nets[base].opened + lab.nets[cand].opened
	env.Resume = filepath.Dir(res[0].Dir)
	again, err := SearchBuilds(context.Background(), env, cfg, builds)
	if err != nil || lab.nets[base].opened+lab.nets[cand].opened != before || again[1].Interval != res[1].Interval {
		t.Errorf("resume: %v, %d opened more", err, lab.nets[base].opened+lab.nets[cand].opened-before)
	}
	// Bad settings are refused before anything runs, naming the field.
	bad := cfg
	bad.Precision = 2
	env.Resume = ""
	if _, err := SearchBuilds(context.Background(), env, bad, builds); err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("bad precision: %v", err)
	}
}

// A candidate whose testnet does not come up from its second on ends its
// own search after one more try; the baseline's goes on to its answer. One
// that fails to come up once is tried again and finishes, the failure noted
// on the run's cell.
func TestSearchVariantsOneFails(t *testing.T) {
	search := func(t *testing.T, fail func(opened int) bool) ([]VariantResult, error, []*Dir) {
		cfg := *DefaultSweep()
		cfg.Search, cfg.Connections, cfg.Rates = true, []int{1}, nil
		cfg.Duration = rundir.Duration{Duration: 10 * time.Second}
		var variants []Variant
		var dirs []*Dir
		for _, name := range []string{"baseline", "candidate"} {
			d, f, _ := newSweepDir(t, cfg)
			dirs = append(dirs, d)
			f.capacity = 1500
			opened := 0
			variants = append(variants, Variant{Name: name, Dir: d, Open: func(ctx context.Context) (Testnet, error) {
				if opened++; name == "candidate" && fail(opened) {
					return nil, errors.New("warm-up: txs not committed on every node")
				}
				return f.open(ctx)
			}})
		}
		res, err := SearchVariants(context.Background(), variants, nil)
		return res, err, dirs
	}
	t.Run("always", func(t *testing.T) {
		res, err, _ := search(t, func(n int) bool { return n >= 2 })
		if err == nil || !strings.Contains(err.Error(), "candidate: ") || strings.Contains(err.Error(), "baseline") {
			t.Errorf("error %v, want the candidate's alone", err)
		}
		if res[0].Err != "" || res[0].State.Outcome != judge.Found || !res[0].Bracketed {
			t.Errorf("baseline: %+v", res[0])
		}
		if !strings.Contains(res[1].Err, "warm-up") || res[1].State.Runs != 1 {
			t.Errorf("candidate: %+v", res[1])
		}
	})
	t.Run("once", func(t *testing.T) {
		res, err, dirs := search(t, func(n int) bool { return n == 2 })
		if err != nil || res[1].Err != "" || res[1].State.Outcome != judge.Found {
			t.Fatalf("candidate retried: %v, %+v", err, res[1])
		}
		noted := 0
		for _, c := range dirs[1].Index.Cells {
			for _, n := range c.Notes {
				if strings.HasPrefix(n, "up failed: warm-up") {
					noted++
				}
			}
		}
		if noted != 1 {
			t.Errorf("%d cells note the failed up, want 1", noted)
		}
	})
}
