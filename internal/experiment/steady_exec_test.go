package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

const rotateManifest = `name = "rot"
[node.validator]
count = 2
[node.ephemeral]
count = 1
role = "full"
[rotate]
group = "ephemeral"
cycles = 3
[load]
rate = 100
duration = "60s"
`

// stepLab's Steady writes a finished run directory: results.json, a
// manifest, and what the test puts in it.
type stepLab struct {
	write func(dir string)
	got   []*manifest.Manifest
}

func (l *stepLab) Open(context.Context, *manifest.Manifest, string) (Testnet, error) {
	return nil, errors.New("no testnet")
}

func (l *stepLab) Steady(ctx context.Context, m *manifest.Manifest, parent string) (string, error) {
	l.got = append(l.got, m)
	dir, err := rundir.ClaimStamped(parent, m.Name, testNow(), rundir.Metrics)
	if err != nil {
		return "", err
	}
	d, _ := rundir.Open(dir)
	if err := errors.Join(d.WriteFile(rundir.ResultsFile, []byte("{}\n")), d.WriteFile(rundir.Manifest, m.Raw)); err != nil {
		return dir, err
	}
	l.write(dir)
	return dir, nil
}

func TestRotateVerdict(t *testing.T) {
	m, err := manifest.Parse("rot.toml", []byte(rotateManifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		catchUps []float64 // -1: never caught up
		want     Verdict
		why      string
	}{
		{"all caught up", []float64{12, 14, 13}, Pass, "all 3 cycles caught up"},
		{"one never did", []float64{12, -1, 13}, Fail, "1 of 3 cycles did not catch up"},
		{"no cycle", nil, Inconclusive, "no rotate cycle ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab := &stepLab{write: func(dir string) {
				f := &rundir.FaultResults{}
				for i, s := range tc.catchUps {
					f.Cycles = append(f.Cycles, rundir.Cycle{RotateCycle: rundir.RotateCycle{Cycle: i + 1, Node: "ephemeral0"}, CatchUpS: s})
				}
				d, _ := rundir.Open(dir)
				if err := d.WriteFaults(f); err != nil {
					t.Fatal(err)
				}
			}}
			parent := t.TempDir()
			x, err := (&Rotate{}).NewExecutor(m, Env{Lab: lab, Dir: parent})
			if err != nil {
				t.Fatal(err)
			}
			res, err := x.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want || res.Why != tc.why || filepath.Dir(res.Dir) != parent {
				t.Errorf("got %+v, want %s (%s) in %s", res, tc.want, tc.why, parent)
			}
			if code, _ := ExitCodeOf(res.Err()); code != tc.want.ExitCode() {
				t.Errorf("exit %d, want %d", code, tc.want.ExitCode())
			}
		})
	}
	if _, err := (&Rotate{}).NewExecutor(&manifest.Manifest{}, Env{Lab: &stepLab{}}); err == nil || !strings.Contains(err.Error(), "no [rotate] table") {
		t.Errorf("a manifest without [rotate]: %v", err)
	}
}

// TestSoakExecutor: the soak's load replaces the manifest's, the fit lands
// in soak.json, and a resume refits the same run to the same record.
func TestSoakExecutor(t *testing.T) {
	m, err := manifest.Parse("q.toml", []byte("name = \"q\"\n[node.validator]\ncount = 2\n[load]\nrate = 50\nduration = \"30s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSoak()
	s.Rate, s.Duration.Duration = 300, 5*60e9
	lab := &stepLab{write: func(dir string) {
		// 1.2 s blocks for 5 min, decaying 300 + 500·exp(−t/τ), half-life 100 s.
		tau := 100 / math.Ln2
		var rows []string
		for h, ts := 1, 0.0; ts < 300; h, ts = h+1, ts+1.2 {
			n := int((300+500*math.Exp(-ts/tau))*1.2 + 0.5)
			rows = append(rows, fmt.Sprintf("%d,%d,%d,%d,1000,A", h, int64(2e18+ts*1e9), n, n))
		}
		writeBlocks(t, dir, rows)
	}}
	x, err := s.NewExecutor(m, Env{Lab: lab, Output: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l := lab.got[0].Load; l.Rate != 300 || l.Duration.Duration != 5*60e9 || m.Load.Rate != 50 {
		t.Errorf("soak load %+v (manifest's rate %v): want the soak's 300 tx/s over 5m, the manifest untouched", l, m.Load.Rate)
	}
	rec, err := rundir.SoakRecord.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Fit.Decays || res.Verdict != Pass || !res.Complete || !strings.Contains(res.Why, "half-life") {
		t.Fatalf("result %+v, fit %+v", res, rec.Fit)
	}
	before, _ := os.ReadFile(rundir.SoakRecord.Path(res.Dir))
	rx, err := s.NewExecutor(nil, Env{Resume: res.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rx.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(rundir.SoakRecord.Path(res.Dir)); string(after) != string(before) {
		t.Error("a resume refit to other bytes")
	}
	if _, err := s.NewExecutor(nil, Env{Resume: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("resume of an unfinished soak: %v", err)
	}
}

func testNow() time.Time { return time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC) }
