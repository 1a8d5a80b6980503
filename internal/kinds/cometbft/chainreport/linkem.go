package chainreport

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// linkemDir is where the testnet records its link emulation.
const linkemDir = rundir.LinkemDir

// network is the "Network emulation" part of the parameters: which backend,
// the conditions, and the one-way delays between the zones the nodes are in,
// so a reader knows what latency the results were measured under.
func (r *run) network() []page.Block {
	bs := []page.Block{page.Heading{Level: 3, Text: "Network emulation", ID: ""}}
	dir := r.dir.Join(linkemDir)
	info, err := r.dir.ReadLinkemInfo()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.note(err)
		}
		return append(bs, page.Para{Text: "None: nodes are joined by veth pairs on one bridge (sub-millisecond links, no loss, no rate limit)."})
	}
	cond := page.Table{Head: []string{"backend", "zones", "jitter", "loss", "egress rate per node", "why this backend"}, Rows: [][]string{{info.Backend, page.DashIfEmpty(info.Zones), page.DashIfEmpty(info.Jitter), page.DashIfEmpty(info.Loss), page.DashIfEmpty(info.Bandwidth), info.Reason}}}

	bs = append(bs, cond)
	if data, err := os.ReadFile(filepath.Join(dir, rundir.LinkemMatrixFile)); err == nil {
		mx, err := linkem.ParseCSV(bytes.NewReader(data))
		if err != nil {
			r.note(err)
		} else {
			bs = append(bs, page.Para{Text: "One-way delay in ms from the row's zone to the column's, for the zones of this testnet (zone set `" + info.Zones + "`; round-trip = twice):"})
			bs = append(bs, r.zoneTable(mx))
		}
	}
	em, counters := emulator(info.Backend)
	bs = append(bs, r.lateness(em)...)
	if c, err := r.dir.ReadLinkemCounters(); err == nil {
		bs = append(bs, page.Details{Summary: counters, Text: summarizeCounters(c)})
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.note(err)
	}
	return bs
}

// zoneTable is the matrix restricted to the zones nodes are in, in plan order.
func (r *run) zoneTable(mx *linkem.Matrix) page.Table {
	var zones []string
	seen := map[string]bool{}
	if r.plan != nil {
		for _, n := range r.plan.Nodes {
			if !seen[n.Zone] && mx.Has(n.Zone) {
				seen[n.Zone] = true
				zones = append(zones, n.Zone)
			}
		}
	}
	if len(zones) == 0 {
		zones = append(zones, mx.Zones...)
	}
	t := page.Table{Head: append([]string{"from \\ to"}, zones...)}
	for _, a := range zones {
		row := []string{a}
		for _, b := range zones {
			row = append(row, page.F(float64(mx.OneWay(a, b).Microseconds())/1000, 1))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// summarizeCounters is the port counters' sample lines, sorted, but not
// the lateness histogram (its figures have their own table).
func summarizeCounters(c *rundir.LinkemCounters) string {
	lines := c.CounterLines()
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// emulator names what kept the lateness record and the counters: the
// userspace switch, or on a runner whose nodes run apart (swarm) the
// NFQUEUE agent in each node's task, whose records the harness merged.
func emulator(backend string) (name, counters string) {
	if backend == linkem.KindAgent {
		return "nodes' link agents (an NFQUEUE agent in each node's task, their records merged)", "counters of the link agents at the end of the run, one port per node and peer"
	}
	return "userspace switch", "userspace switch counters at the end of the run"
}
