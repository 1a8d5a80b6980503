package analysis

import (
	"sort"

	"github.com/benchnet/benchnet/internal/analyze"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The publisher's timeline (issue 23; Whiteblock 004's Graphs 10 and 11):
// when each message was meant to go out (published.csv intended_ns), when
// the harness sent the publish request (sent_ns) and when the publishing
// host put it on the wire (its trace's publish event; the ack where the
// host left none). Whiteblock found its Orchestra's inter-arrival times
// "erratic" and its transmissions late against the schedule; these are the
// same two views of ours.

// Transmission is one message's three times, ns.
type Transmission struct {
	Seq      uint64
	Intended int64 // scheduled
	Sent     int64 // harness sent the publish request
	// Host is the publishing host's own publish time (trace), else its
	// ack, else Sent; HostTraced says whether it came from the trace.
	Host       int64
	HostTraced bool
}

// Transmissions pairs published.csv with the hosts' publish times
// (hostNs: message ID → traced publish time; nil or missing → the ack).
// Rows without a send time (never sent) are left out. Seq order.
func Transmissions(pub []rundir.Published, hostNs map[string]int64) []Transmission {
	out := make([]Transmission, 0, len(pub))
	for _, p := range pub {
		if p.SentAt == 0 {
			continue
		}
		t := Transmission{Seq: p.Seq, Intended: p.Intended, Sent: p.SentAt, Host: p.SentAt}
		if h, ok := hostNs[p.MsgID]; ok && h > 0 {
			t.Host, t.HostTraced = h, true
		} else if p.Ack > 0 {
			t.Host = p.Ack
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// TimelineStats summarises a publisher's timeline, all in ms.
type TimelineStats struct {
	Messages int
	Traced   int // messages whose host time is from the trace
	// IntendedGap is the median gap of the schedule (1/rate).
	IntendedGap float64
	// SentGap and HostGap are the inter-arrival times of the harness's
	// sends and of the hosts' publications: the gaps between consecutive
	// times of the stream, sorted by time (a message overtaking another
	// gives two short gaps, never a negative one).
	SentGap, HostGap rundir.Stats
	// SentLate and HostLate are actual − intended per message.
	SentLate, HostLate rundir.Stats
}

// Timeline computes ts's statistics; the zero value for no messages.
func Timeline(ts []Transmission) TimelineStats {
	s := TimelineStats{Messages: len(ts)}
	if len(ts) == 0 {
		return s
	}
	intended := make([]int64, len(ts))
	sent := make([]int64, len(ts))
	host := make([]int64, len(ts))
	var sl, hl []float64
	for i, t := range ts {
		intended[i], sent[i], host[i] = t.Intended, t.Sent, t.Host
		sl = append(sl, float64(t.Sent-t.Intended)/1e6)
		hl = append(hl, float64(t.Host-t.Intended)/1e6)
		if t.HostTraced {
			s.Traced++
		}
	}
	s.IntendedGap = analyze.Summarize(Gaps(intended)).P50
	s.SentGap, s.HostGap = stats(Gaps(sent)), stats(Gaps(host))
	s.SentLate, s.HostLate = stats(sl), stats(hl)
	return s
}

func stats(v []float64) rundir.Stats { return analyze.Summarize(v) }

// Gaps are the inter-arrival times (ms) of times taken as one stream: the
// differences between consecutive times once sorted. times is not changed.
func Gaps(times []int64) []float64 {
	if len(times) < 2 {
		return nil
	}
	s := append([]int64(nil), times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := make([]float64, len(s)-1)
	for i := 1; i < len(s); i++ {
		out[i-1] = float64(s[i]-s[i-1]) / 1e6
	}
	return out
}
