package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/rundir"
)

// A soak of a manifest with [variants] runs each variant's soak (the
// soak's load over the variant's manifest) and fits each on its own: the
// variant whose chain decays with a 60 s half-life gets 60 s, the one that
// holds its rate gets "no decay".
func TestSoakVariants(t *testing.T) {
	m, err := manifest.Parse("q.toml", []byte(`name = "q"
[node.validator]
count = 2
[load]
rate = 50
duration = "30s"
[variants.info]
[variants.quiet.node.validator.config]
"log_level" = "error"
`))
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSoak()
	s.Rate, s.Duration.Duration = 300, 5*60e9
	lab := &stepLab{}
	lab.write = func(dir string) {
		cur := lab.got[len(lab.got)-1]
		decays := !strings.Contains(string(cur.Raw), `log_level = 'error'`) && !strings.Contains(string(cur.Raw), `log_level = "error"`)
		tau := 60 / math.Ln2
		var rows []string
		for h, ts := 1, 0.0; ts < 300; h, ts = h+1, ts+1.2 {
			v := 300.0
			if decays {
				v = 300 + 500*math.Exp(-ts/tau)
			}
			n := int(v*1.2 + 0.5)
			rows = append(rows, fmt.Sprintf("%d,%d,%d,%d,1000,A", h, int64(2e18+ts*1e9), n, n))
		}
		writeBlocks(t, dir, rows)
	}
	x, err := s.NewExecutor(m, Env{Lab: lab, Output: t.TempDir(), Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.got) != 2 {
		t.Fatalf("%d runs, want one per variant", len(lab.got))
	}
	for _, g := range lab.got {
		if g.Load.Rate != 300 || g.Load.Duration.Duration != 5*60e9 {
			t.Errorf("variant load %+v: want the soak's 300 tx/s over 5m", g.Load)
		}
	}
	idx, err := rundir.SoakVariantsRecord.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !idx.Complete || len(idx.Runs) != 2 || idx.Runs[0].Variant != "info" || idx.Runs[1].Label != "validator.config.log_level=error" {
		t.Fatalf("index %+v", idx)
	}
	if !strings.Contains(idx.Runs[1].RunDir, "q-quiet") {
		t.Errorf("run directory %q does not name its variant", idx.Runs[1].RunDir)
	}
	info, err := rundir.SoakRecord.Read(filepath.Join(res.Dir, idx.Runs[0].RunDir))
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := rundir.SoakRecord.Read(filepath.Join(res.Dir, idx.Runs[1].RunDir))
	if err != nil {
		t.Fatal(err)
	}
	if !info.Fit.Decays || math.Abs(info.Fit.HalfLife-60) > 6 {
		t.Errorf("info: fit %+v, want a half-life near 60 s", info.Fit)
	}
	if quiet.Fit.Decays {
		t.Errorf("quiet: fit %+v, want no decay", quiet.Fit)
	}
	if !strings.Contains(res.Why, "info: ") || !strings.Contains(res.Why, "quiet: ") {
		t.Errorf("why %q names not every variant", res.Why)
	}
	// A resume refits the runs it has and runs nothing.
	rx, err := s.NewExecutor(nil, Env{Resume: res.Dir, Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rx.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(lab.got) != 2 {
		t.Errorf("a resume of a complete soak ran %d more", len(lab.got)-2)
	}
}
