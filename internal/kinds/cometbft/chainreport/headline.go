package chainreport

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// headlineSection is what a QA engineer reads first: is the run valid, what
// did it commit, how fast, and does every tx add up. Everything else of the
// report explains these lines.
func (r *run) headlineSection() []page.Block {
	bs := []page.Block{page.Heading{Level: 2, Text: "Headline", ID: "headline"}}
	res := r.results
	if res == nil {
		return append(bs, page.NoData{Reason: "no results.json: run `benchnet analyze " + filepath.Base(r.dir.Path) + "` (after `benchnet down` if it is still up) for the accounting, throughput and latency"})
	}
	if rc := res.Recovered; rc != nil {
		bs = append(bs, page.Para{Text: fmt.Sprintf("**RECOVERED** from a run that did not finish (%s): `benchnet analyze` read the blocks offline from the store of %s (%s, %s). Txs still in a mempool when the run died count as lost.",
			rc.Reason, rc.Node, rc.Method, rc.Release)})
	}
	verdict := "**valid**"
	if !res.Valid {
		verdict = "**INVALID**: " + strings.Join(res.Invalid, "; ")
	}
	a := res.Accounting
	identity := "holds"
	if a.Sent != a.Committed+a.Rejected+a.Lost+a.Pending {
		identity = fmt.Sprintf("**VIOLATED** (%d ≠ %d)", a.Sent, a.Committed+a.Rejected+a.Lost+a.Pending)
	}
	rows := [][]string{
		{"verdict", verdict},
		{"committed throughput", page.F(res.TxPerSecond, 1) + fmt.Sprintf(" tx/s (%.0f txs over %s s of block time)", math.Round(res.TxPerSecond*res.DurationSec), page.F(res.DurationSec, 1))},
		{"latency p50 / p99", page.Ms(res.Latency.P50) + " / " + page.Ms(res.Latency.P99) + " ms (block " + orDash(res.LatencyBlock) + " time − send time)"},
		{"accounting", fmt.Sprintf("%d sent = %d committed + %d rejected + %d lost + %d pending: %s", a.Sent, a.Committed, a.Rejected, a.Lost, a.Pending, identity)},
	}
	if s := r.latencyHeadline(); s != "" {
		rows = append(rows, []string{"emulated links", s})
	}
	if l := r.offeredLoad(); l != "" {
		rows = append(rows, []string{"offered load", l})
	}
	if r.plan != nil {
		rows = append(rows, []string{"testnet", fmt.Sprintf("%d nodes, topology %s, %s", len(r.plan.Nodes), r.plan.Topology, r.releases())})
		if ts := r.plan.Network.TimeScale; ts > 1 {
			rows = append(rows, []string{"slow motion", fmt.Sprintf("every consensus timeout ×%g ([network] time_scale): block times and latencies are not real-time figures", ts)})
		}
	}
	bs = append(bs, page.Table{Head: []string{"", "run " + orNone(res.RunID)}, Rows: rows})
	return append(bs, page.Para{Text: "Details: [Accounting](#accounting) · [Summary](#summary) · [Plots](#plots) · [Parameters](#parameters) · [Events](#events)."})
}

func orNone(s string) string {
	if s == "" {
		return "(no id)"
	}
	return "`" + s + "`"
}

// releases lists the testnet's releases in plan order, once each.
func (r *run) releases() string {
	var out []string
	seen := map[string]bool{}
	for _, n := range r.plan.Nodes {
		if s := n.Release.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// offeredLoad is one line: what the generator was asked to send, from the
// load that ran (plan.json, flags applied) and the per-connection targets.
func (r *run) offeredLoad() string {
	if r.plan == nil {
		return ""
	}
	l := r.plan.Load
	conns := 0
	total := 0.0
	if r.results != nil {
		for _, c := range r.results.Load {
			conns++
			total += c.TargetRate
		}
	}
	amount := "for " + l.Duration.String()
	if l.Count > 0 {
		amount = strconv.Itoa(l.Count) + " txs"
	}
	s := fmt.Sprintf("%s %s tx/s × %s (target %s)", l.Shape, page.G(l.Rate), plural(l.Connections, "connection"), l.Target)
	if l.Shape == "ramp" {
		s = fmt.Sprintf("ramp %s→%s tx/s × %s (target %s)", page.G(l.RampFrom), page.G(l.Rate), plural(l.Connections, "connection"), l.Target)
	}
	if conns > 0 {
		s += fmt.Sprintf(" → %s tx/s offered over %s", page.G(total), plural(conns, "connection"))
	}
	return fmt.Sprintf("%s, %s, %d-byte %s txs", s, amount, l.Size, l.Format)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// loadThatRan is the load configuration the generator ran with: plan.json's
// [load] (the manifest with the command line's flags applied), marked where
// it differs from manifest.toml, and what load.json says was sent.
func (r *run) loadThatRan() []page.Block {
	bs := []page.Block{page.Heading{Level: 3, Text: "Load that ran", ID: ""}}
	if r.plan == nil {
		return append(bs, page.NoData{Reason: "no " + rundir.Plan})
	}
	var given *manifest.Load
	if len(r.manifest) > 0 {
		if m, err := manifest.LoadCopy(r.dir.ManifestPaths()); err == nil {
			given = &m.Load
		}
	}
	ran := reflect.ValueOf(r.plan.Load)
	typ := ran.Type()
	t := page.Table{Head: []string{"load", "value", "manifest.toml"}}
	changed := 0
	for i := 0; i < typ.NumField(); i++ {
		key := strings.Split(typ.Field(i).Tag.Get("toml"), ",")[0]
		if key == "" || key == "-" {
			continue
		}
		// Keys the plan omits when unset (another workload's) are not rows
		// unless the manifest set them.
		if strings.HasSuffix(typ.Field(i).Tag.Get("json"), ",omitempty") && ran.Field(i).IsZero() &&
			(given == nil || reflect.ValueOf(*given).Field(i).IsZero()) {
			continue
		}
		v := fmtValue(ran.Field(i).Interface())
		note := ""
		if given != nil {
			if g := fmtValue(reflect.ValueOf(*given).Field(i).Interface()); g != v {
				note = "**" + g + "** (overridden)"
				changed++
			}
		}
		t.Rows = append(t.Rows, []string{key, v, note})
	}
	text := "The generator's configuration: manifest.toml with the command line's flags applied (plan.json)."
	if changed > 0 {
		text += fmt.Sprintf(" %d value(s) differ from manifest.toml.", changed)
	}
	bs = append(bs, page.Para{Text: text}, t)
	if ls, err := r.dir.ReadLoad(); err == nil {
		bs = append(bs, page.Para{Text: fmt.Sprintf("The generator's own account (load.json): %d txs expected, %d attempted.", ls.Expected, ls.Attempted)})
		for _, sk := range ls.Skipped {
			bs = append(bs, page.Para{Text: fmt.Sprintf("Not loaded: %s, %s.", sk.Node, sk.Reason)})
		}
	} else {
		bs = append(bs, page.Para{Text: "No load.json (the generator's own account, written when the load ends): the load did not finish."})
	}
	return bs
}

func fmtValue(v any) string {
	switch x := v.(type) {
	case float64:
		return page.G(x)
	case rundir.Duration:
		return x.String()
	case string:
		if x == "" {
			return "—"
		}
		return x
	default:
		return fmt.Sprint(x)
	}
}
