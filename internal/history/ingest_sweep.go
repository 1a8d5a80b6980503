package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/judge"
	"github.com/benchnet/benchnet/internal/rundir"
)

// sweep records a sweep or search directory: one record per load measured
// (variant, connections, rate, duration), its done cells the repeats, and
// one saturation record per variant and connection count, with the
// interval and every probe.
func (b *Batch) sweep(ctx context.Context, dir string, sc scope) error {
	idx, err := rundir.SweepRecord.Read(dir)
	if err != nil {
		return err
	}
	if !idx.Complete {
		return &UnfinishedError{Dir: dir, Missing: rundir.SweepFile + " is not complete", Hint: "'benchnet sweep --resume " + dir + "' measures the remaining cells"}
	}
	idx.Judge() // verdicts as a report would give them, old records included
	if sc.scenario == "" {
		sc.scenario = idx.Name
	}
	fallback, _ := os.ReadFile(filepath.Join(dir, rundir.Manifest))
	kind := "sweep"
	if idx.Kind == "search" {
		kind = "search"
	}
	if sc.step != "" {
		kind = "qa"
	}
	type line struct {
		variant string
		c       int
		d       rundir.Duration
	}
	type load struct {
		line
		r float64
	}
	loads, lines := map[load]*Record{}, map[line]*Record{}
	var order []*Record
	for _, c := range idx.Cells {
		if c.Status != rundir.CellDone {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: cell %s is %s", dir, c.ID, c.Status))
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		runDir := filepath.Join(dir, c.RunDir)
		ri, err := readRun(runDir, fallback)
		if err != nil {
			return fmt.Errorf("sweep %s, cell %s: %w", dir, c.ID, err)
		}
		vsc := sc
		if vsc.variant == "" {
			vsc.variant = c.Variant
		}
		lk := line{c.Variant, c.Connections, idx.CellDuration(c)}
		name := fmt.Sprintf("c=%d d=%s", lk.c, lk.d)
		if c.Variant != "" {
			name = c.Variant + " " + name
		}
		sat := lines[lk]
		if sat == nil {
			sat = ri.record(vsc, kind, "saturation "+name)
			sat.Load.Rate = 0 // searched
			sat.Saturation = saturationOf(idx, lk.variant, lk.c, lk.d)
			lines[lk] = sat
			order = append(order, sat)
		}
		p := Probe{Seq: c.Order, Probe: c.Probe, Rate: c.Rate, Connections: c.Connections, Repeat: c.Repeat, Dir: runDir}
		if c.Verdict != nil {
			p.State = string(c.Verdict.State)
		}
		if f := c.Figures; f != nil {
			p.TPS, p.P50Ms = f.TPS, f.P50Ms
		}
		sat.Probes = append(sat.Probes, p)

		k := load{lk, c.Rate}
		rec := loads[k]
		if rec == nil {
			rec = ri.record(vsc, kind, fmt.Sprintf("cell %s r=%g", name, c.Rate))
			loads[k] = rec
			order = append(order, rec)
		}
		ri.run.Repeat = len(rec.Runs) + 1 // in run order: stable for the same sweep.json
		rec.Runs = append(rec.Runs, ri.run)
	}
	b.Records = append(b.Records, order...)
	return nil
}

// saturationOf is where the sweep places one variant's saturation at c
// connections and load duration d: a search's bracket, or a grid line's
// highest sustainable rate and the rate it stopped at.
func saturationOf(idx *rundir.SweepIndex, variant string, c int, d rundir.Duration) *Saturation {
	if st := idx.Search; idx.Kind == "search" && st != nil {
		out := &Saturation{Connections: c, Lo: st.Low, Hi: st.High, Outcome: st.Outcome, Rule: st.Rule}
		if !st.Done {
			out.Outcome = "not done"
		}
		return out
	}
	var g *judge.Grid
	if idx.Grouped() {
		for i := range idx.Groups {
			if idx.Groups[i].Variant == variant && idx.Groups[i].Duration == d {
				g = &idx.Groups[i].Grid
			}
		}
	} else {
		g = idx.Grid
	}
	if g == nil {
		return nil
	}
	for _, l := range g.Lines {
		if l.Connections == c {
			out := &Saturation{Connections: c, Lo: l.Sustainable, Hi: l.StoppedAt, Outcome: "ok at every rate", Rule: g.Rule}
			if l.StoppedState != "" {
				out.Outcome = fmt.Sprintf("%s at %g tx/s", l.StoppedState, l.StoppedAt)
			}
			return out
		}
	}
	return nil
}
