package analysis

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Run analyses the gossip run in d: it writes deliveries.csv (atomically)
// and results.json with the gossip section, and returns the results. The
// run is valid when the publish generator kept its schedule.
func Run(d *rundir.Dir) (*rundir.Results, error) {
	in, err := Load(d)
	if err != nil {
		return nil, err
	}
	path := rundir.DeliveriesCSV.Path(d)
	w, err := rundir.DeliveriesCSV.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	g, err := Stream(in, w.Write)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	res := Results(d, in, g)
	if err := d.WriteResults(res); err != nil {
		return nil, fmt.Errorf("gossip analysis: %w", err)
	}
	return res, nil
}

// Results wraps a gossip section into results.json's record: run id,
// validity, and each node's fate.
func Results(d *rundir.Dir, in *Input, g *rundir.GossipResults) *rundir.Results {
	res := &rundir.Results{Gossip: g, RunID: runID(d), DurationSec: durationSec(in)}
	res.Invalid = Validity(g)
	res.Valid = len(res.Invalid) == 0
	exited := map[string]string{}
	for _, e := range in.Events {
		if e.Kind == rundir.EventNodeExited {
			exited[e.Node] = e.Detail
		}
	}
	for _, n := range g.HostNodes {
		// Exited and DownSec come from the same outages the blame does.
		sec, down := downSec(n.Outages)
		res.Nodes = append(res.Nodes, rundir.NodeResult{Name: n.Name, Sent: n.Published, Exited: down, Detail: exited[n.Name],
			DownSec: sec, Outages: n.Outages})
	}
	return res
}

func runID(d *rundir.Dir) string {
	if d == nil {
		return ""
	}
	return baseName(d.Path)
}

// durationSec is the publish schedule's span.
func durationSec(in *Input) float64 {
	if len(in.Published) == 0 {
		return 0
	}
	lo, hi := in.Published[0].Intended, in.Published[0].Intended
	for _, p := range in.Published {
		lo, hi = min(lo, p.Intended), max(hi, p.Intended)
	}
	return analyze.Round3(float64(hi-lo) / 1e9)
}

func baseName(p string) string { return filepath.Base(p) }
