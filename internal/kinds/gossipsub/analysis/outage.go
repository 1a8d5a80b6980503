package analysis

import (
	"math"
	"strings"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Causes of an outage (rundir.Outage.Cause).
const (
	CauseDown    = "down"    // died (node_exited), killed or stopped (node_kill, node_stop) until a restart (node_started, node_ready)
	CausePaused  = "paused"  // frozen (node_pause) until node_resume
	CauseCutOff  = "cut_off" // its links cut (node_disconnect, node_partition) until node_heal
	openInterval = math.MaxInt64
)

// outage is one interval [start, end) a host was out; end is openInterval
// when nothing undid it. group tells the sides of a cut apart: a
// disconnected host is alone on its side, a partition's set shares one.
type outage struct {
	cause      string
	kind       string // the events.jsonl kind that started it
	start, end int64
	group      int
}

// outages reads every host's outages from events.jsonl: the one place
// both the blame (reason) and results.json's node records (Results) take
// them from.
func outages(events []rundir.Event) map[string][]outage {
	out := map[string][]outage{}
	closeLast := func(name, cause string, t int64) {
		d := out[name]
		for i := len(d) - 1; i >= 0; i-- {
			if d[i].cause == cause && d[i].end == openInterval && t >= d[i].start {
				d[i].end = t
				return
			}
		}
	}
	for i, e := range events {
		t := e.Time.UnixNano()
		switch e.Kind {
		case "node_exited", "node_kill", "node_stop":
			// Died, or killed or stopped by a [[perturb]] step (the
			// runner does not report an exit it caused as node_exited).
			// A second report of the same exit (kill, then the runner
			// seeing it exit) does not open a second interval.
			if d := out[e.Node]; len(d) > 0 && d[len(d)-1].cause == CauseDown && d[len(d)-1].end == openInterval {
				continue
			}
			out[e.Node] = append(out[e.Node], outage{cause: CauseDown, kind: e.Kind, start: t, end: openInterval})
		case "node_started", "node_ready":
			closeLast(e.Node, CauseDown, t)
		case "node_pause":
			out[e.Node] = append(out[e.Node], outage{cause: CausePaused, kind: e.Kind, start: t, end: openInterval})
		case "node_resume":
			closeLast(e.Node, CausePaused, t)
		case "node_disconnect", "node_partition":
			// A partition's event names its set "a,b,c".
			for _, n := range strings.Split(e.Node, ",") {
				if n != "" {
					out[n] = append(out[n], outage{cause: CauseCutOff, kind: e.Kind, start: t, end: openInterval, group: i + 1})
				}
			}
		case "node_heal":
			for n, d := range out {
				for j := range d {
					if d[j].cause == CauseCutOff && d[j].end == openInterval && t >= d[j].start {
						d[j].end = t
					}
				}
				out[n] = d
			}
		}
	}
	return out
}

// overlaps reports whether o covers some of [pub, pub+ExitWindow]: a
// message published up to ExitWindow before the outage may not have
// reached the host yet.
func (o *outage) overlaps(pub int64) bool {
	return o.start <= pub+int64(ExitWindow) && o.end > pub
}

// outageReason is the blame for host v missing a message publisher p
// published at pub, or "" when no outage explains it: v down, then v
// paused, then v and p on different sides of a cut.
func (a *analysis) outageReason(v, p int32, pub int64) string {
	vo, po := a.out[v], a.out[p]
	for _, cause := range []string{CauseDown, CausePaused} {
		for i := range vo {
			if vo[i].cause == cause && vo[i].overlaps(pub) {
				return reasonOf[cause]
			}
		}
	}
	// sameSide: the other host shares the cut's side (a partition's set).
	sameSide := func(o *outage, other []outage) bool {
		for j := range other {
			if other[j].cause == CauseCutOff && other[j].group == o.group && other[j].overlaps(pub) {
				return true
			}
		}
		return false
	}
	for i := range vo {
		if vo[i].cause == CauseCutOff && vo[i].overlaps(pub) && !sameSide(&vo[i], po) {
			return ReasonHostCutOff
		}
	}
	for i := range po {
		if po[i].cause == CauseCutOff && po[i].overlaps(pub) && !sameSide(&po[i], vo) {
			return ReasonHostCutOff
		}
	}
	return ""
}

var reasonOf = map[string]string{CauseDown: ReasonHostExited, CausePaused: ReasonHostPaused, CauseCutOff: ReasonHostCutOff}

// nodeOutages is results.json's view of a host's outages; one still open
// lasts until end (runEnd).
func nodeOutages(d []outage, end int64) []rundir.Outage {
	var r []rundir.Outage
	for _, o := range d {
		ro := rundir.Outage{Cause: o.cause, Event: o.kind, StartNs: o.start, EndNs: o.end, Undone: o.end != openInterval}
		if !ro.Undone {
			ro.EndNs = max(end, o.start)
		}
		ro.Sec = analyze.Round3(float64(ro.EndNs-ro.StartNs) / 1e9)
		r = append(r, ro)
	}
	return r
}

// downSec is how long the host was down (died, killed, stopped) in all,
// and whether it ever was.
func downSec(o []rundir.Outage) (float64, bool) {
	var s float64
	down := false
	for _, x := range o {
		if x.Cause == CauseDown {
			s, down = s+x.Sec, true
		}
	}
	return analyze.Round3(s), down
}

// runEnd is the later of events.jsonl's last event and the last
// publication: an outage nothing undid lasts until then.
func runEnd(in *Input) int64 {
	var end int64
	for _, e := range in.Events {
		end = max(end, e.Time.UnixNano())
	}
	for _, p := range in.Published {
		end = max(end, p.Intended, p.SentAt, p.Ack)
	}
	return end
}
