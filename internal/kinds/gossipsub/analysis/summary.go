package analysis

import (
	"fmt"
	"strings"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Kind is the gossip lab's analysis, for analyze.Run.
var Kind = analyze.Kind{Analyze: Run, Summary: Summary, Outputs: []string{rundir.DeliveriesCSV.Name}}

// Summary is the few lines a gossip run prints at its end.
func Summary(res *rundir.Results) string {
	var b strings.Builder
	g := res.Gossip
	if g == nil {
		return ""
	}
	valid := "valid"
	if !res.Valid {
		valid = "NOT VALID: " + strings.Join(res.Invalid, "; ")
	}
	fmt.Fprintf(&b, "\ngossip run: %s\n", valid)
	fmt.Fprintf(&b, "  %d hosts, %d messages: MDR %.4f (%d of %d deliveries)", g.Nodes, g.Messages, g.MDR, g.Delivered, g.Expected)
	if len(g.Missing) > 0 {
		fmt.Fprintf(&b, ", missing %v", g.Missing)
	}
	d, l := g.Dissemination, g.LastDelivery
	fmt.Fprintf(&b, "\n  dissemination ms: mean %.1f p50 %.1f p99 %.1f max %.1f; last delivery ms: mean %.1f p99 %.1f max %.1f\n", d.Avg, d.P50, d.P99, d.Max, l.Avg, l.P99, l.Max)
	fmt.Fprintf(&b, "  last-delivery hop p50 %.0f max %.0f; longest chain p50 %.0f max %.0f; duplicates per delivery %.2f\n",
		g.LastDeliveryHop.P50, g.LastDeliveryHop.Max, g.MaxHop.P50, g.MaxHop.Max, g.Duplicates.Avg)
	return b.String()
}
